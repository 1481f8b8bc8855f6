//! The `AgentMessage` envelope: one transcript line, whether it is an LLM message,
//! an application's custom message or a line kept as it was (`Unknown`).

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::sync::OnceLock;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess};
use serde::{Deserialize, Serialize};

use crate::content::Role;
use crate::custom::{CustomEntry, CustomMessage, DynCustomMessage};
use crate::flat::{deserialize_flat, Envelope, EnvelopeSlot, Key, RoleDispatch};
use crate::message::{
    line, AssistantMessage, LlmMessage, Message, MessageId, SystemMessage, ToolResultMessage,
    TurnId, UserMessage,
};
use crate::registry::Registry;

/// One line of a transcript.
///
/// An LLM message (`"role"` is `system`, `user`, `assistant` or `toolResult`), a
/// custom message (any other `"role"`, decoded through the [`Registry`]), or a
/// line that was kept but not decoded:
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
    Custom(CustomEntry),
    /// A line kept as it was: an unregistered kind, a newer version, or a body that
    /// failed to decode.
    Unknown(UnknownMessage),
}

impl AgentMessage {
    /// A custom message without id or turn.
    pub fn custom<T: CustomMessage>(message: T) -> Self {
        Self::Custom(CustomEntry::new(message))
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

    /// The turn that produced the message, if known.
    pub fn turn_id(&self) -> Option<&TurnId> {
        match self {
            Self::Llm(m) => m.turn_id.as_ref(),
            Self::Custom(c) => c.turn_id.as_ref(),
            Self::Unknown(u) => u.turn_id(),
        }
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

    /// Decodes one line with the global registry, leniently (see [`decode_line`]).
    pub fn from_line(line: &str) -> Result<Self, DecodeError> {
        decode_line(line, Registry::global(), DecodeMode::Lenient)
    }

    /// Appends the line as compact JSON, without a newline. A kept line is
    /// appended byte for byte.
    pub fn write_line(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        match self {
            Self::Llm(m) => serde_json::to_writer(out, m),
            Self::Custom(c) => c.message.write_json(out, c.id.as_ref(), c.turn_id.as_ref()),
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

impl From<CustomEntry> for AgentMessage {
    fn from(entry: CustomEntry) -> Self {
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

/// Why a line was kept as [`AgentMessage::Unknown`] (or, in strict mode, rejected).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnknownReason {
    /// No registered type claims the kind.
    UnknownKind,
    /// Two registered types claim the kind.
    AmbiguousKind {
        /// The type registered first.
        first: &'static str,
        /// The type registered second.
        second: &'static str,
    },
    /// The line was written by a newer version of the kind.
    NewerVersion {
        /// The `"v"` of the line.
        found: u32,
        /// The version compiled in.
        supported: u32,
    },
    /// The body does not decode as the kind's type.
    Invalid {
        /// The decoder's error, with the line's column.
        error: String,
    },
    /// Migrating an older version failed.
    Migration {
        /// The stored version.
        from: u32,
        /// The migration's error.
        error: String,
    },
    /// The line is not a transcript line at all: not one JSON object, no
    /// `"role"`, a `"role"` that is not a string, a fragment cut off by a crash.
    /// The transcript reader keeps it (lenient) so that nothing is lost.
    Malformed(Box<DecodeError>),
    /// The line is not UTF-8. [`UnknownMessage::raw_bytes`] holds its exact
    /// bytes; [`UnknownMessage::raw`] a lossy text of them.
    NotUtf8 {
        /// How many bytes from the start of the line are valid UTF-8.
        valid_up_to: usize,
    },
}

impl fmt::Display for UnknownReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::UnknownKind => f.write_str("no registered type claims this kind"),
            Self::AmbiguousKind { first, second } => {
                write!(f, "the kind is claimed by both `{first}` and `{second}`")
            }
            Self::NewerVersion { found, supported } => write!(
                f,
                "written by version {found} of the kind; this build reads up to version {supported}"
            ),
            Self::Invalid { error } => write!(f, "the body does not decode: {error}"),
            Self::Migration { from, error } => {
                write!(f, "migration from version {from} failed: {error}")
            }
            Self::Malformed(error) => write!(f, "not a transcript line: {error}"),
            Self::NotUtf8 { valid_up_to } => {
                write!(f, "not UTF-8 (invalid byte at column {})", valid_up_to + 1)
            }
        }
    }
}

/// A line kept as it was, with its kind and why it was not decoded. Writing the
/// transcript back emits [`raw`](Self::raw) unchanged.
///
/// Lines read by the transcript reader ([`decode_line`],
/// [`JsonlReader`](crate::JsonlReader)) keep their exact bytes. Keeping a line
/// costs about a copy of it: a line that no decoder ran on (an unregistered or
/// ambiguous kind, a newer version) is checked only for its `{`, its string
/// `"role"` and its closing `}`, and the rest is parsed on first use by
/// [`id`](Self::id), [`turn_id`](Self::turn_id) or [`validate`](Self::validate)
/// (once; the answer is cached). A line whose decoder ran and failed was parsed
/// already: a syntax error there makes [`decode_line`] fail with
/// [`DecodeError::NotJson`] instead. [`UnknownMessage::new`] validates at once.
///
/// The generic `Deserialize` of [`AgentMessage`] (used by
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
        match serde_json::from_str::<UnknownHead>(raw) {
            Ok(head) => Self {
                id: head.id.and_then(|s| s.0).map(MessageId::from),
                turn_id: head.turn_id.and_then(|s| s.0).map(TurnId::from),
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
    fn keep(raw: String, kind: String, reason: UnknownReason) -> Result<Self, DecodeError> {
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
    fn keep_unparsed(
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
    /// why: what [`decode_line`] said of it (`error`), or that it is not UTF-8.
    /// Its kind is its `"role"` when it has a string one, otherwise empty. It
    /// never reaches a model, and a transcript writer emits its bytes unchanged.
    ///
    /// ```
    /// # use agentmsg_runtime::{decode_line, DecodeMode, Registry, UnknownMessage, UnknownReason};
    /// let line = br#"{"content":"no role"}"#;
    /// let error = decode_line(std::str::from_utf8(line).unwrap(), &Registry::new(), DecodeMode::Lenient)
    ///     .unwrap_err();
    /// let kept = UnknownMessage::malformed(line.to_vec(), error);
    /// assert_eq!(kept.raw_bytes(), line);
    /// assert!(matches!(kept.reason(), UnknownReason::Malformed(_)));
    ///
    /// let bytes = b"{\"role\":\"user\xff\"}".to_vec();
    /// let kept = UnknownMessage::malformed(bytes, agentmsg_runtime::DecodeError::MissingRole);
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

    /// `Ok` when the raw text is one well-formed JSON object; otherwise
    /// [`DecodeError::NotJson`] with the parser's message. A line whose kind no
    /// decoder claims is kept without being parsed; this parses it (once).
    ///
    /// ```
    /// # use agentmsg_runtime::{decode_line, AgentMessage, DecodeMode, Registry};
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

/// The `id` and `turnId` of a kept line; everything else is skipped.
#[derive(Deserialize)]
struct UnknownHead {
    #[serde(default)]
    id: Option<MaybeString>,
    #[serde(default, rename = "turnId")]
    turn_id: Option<MaybeString>,
}

/// A string, or any other JSON value (skipped).
struct MaybeString(Option<String>);

impl<'de> Deserialize<'de> for MaybeString {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> de::Visitor<'de> for V {
            type Value = MaybeString;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<MaybeString, E> {
                Ok(MaybeString(Some(v.to_owned())))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<MaybeString, E> {
                Ok(MaybeString(None))
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<MaybeString, E> {
                Ok(MaybeString(None))
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<MaybeString, E> {
                Ok(MaybeString(None))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<MaybeString, E> {
                Ok(MaybeString(None))
            }
            fn visit_unit<E: de::Error>(self) -> Result<MaybeString, E> {
                Ok(MaybeString(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<MaybeString, E> {
                Ok(MaybeString(None))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<MaybeString, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeString(None))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<MaybeString, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(MaybeString(None))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Llm(m) => m.serialize(serializer),
            Self::Custom(c) => c.serialize(serializer),
            Self::Unknown(u) => u.serialize(serializer),
        }
    }
}

/// Decodes through the global registry, leniently: an unregistered kind, a newer
/// version or a custom body that fails to decode becomes
/// [`AgentMessage::Unknown`] (with a re-encoded object, see [`UnknownMessage`]).
/// An LLM message that fails to decode is an error here; the transcript reader
/// keeps it as `Unknown` too.
impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_flat(
            deserializer,
            AgentDispatch {
                registry: Registry::global(),
            },
        )
    }
}

/// Decodes the body of any line once its role is known.
struct AgentDispatch<'r> {
    registry: &'r Registry,
}

impl<'de> RoleDispatch<'de> for AgentDispatch<'_> {
    type Value = AgentMessage;

    fn dispatch<M: MapAccess<'de>>(
        self,
        role: &str,
        map: M,
        envelope: &EnvelopeSlot,
    ) -> Result<AgentMessage, M::Error> {
        let body = de::value::MapAccessDeserializer::new(map);
        let message = match role {
            "user" => Message::User(UserMessage::deserialize(body)?),
            "assistant" => Message::Assistant(AssistantMessage::deserialize(body)?),
            "toolResult" => Message::ToolResult(ToolResultMessage::deserialize(body)?),
            "system" => Message::System(SystemMessage::deserialize(body)?),
            kind => {
                let fields = serde_json::Map::<String, serde_json::Value>::deserialize(body)?;
                let envelope = envelope.take();
                let reason = match self.registry.get(kind) {
                    Some(registration) => {
                        match registration.decode_fields(&fields, envelope.clone()) {
                            Ok(entry) => return Ok(AgentMessage::Custom(entry)),
                            Err(reason) => reason,
                        }
                    }
                    None => unregistered_reason(self.registry, kind),
                };
                let mut raw = Vec::new();
                let mut serializer = serde_json::Serializer::new(&mut raw);
                crate::custom::write_line(
                    &mut serializer,
                    kind,
                    &fields,
                    envelope.id.as_ref(),
                    envelope.turn_id.as_ref(),
                    0,
                )
                .map_err(de::Error::custom)?;
                if let Some(v) = envelope.v {
                    // `v` goes back exactly as it was read, even when it is 1.
                    raw.pop();
                    raw.extend_from_slice(format!(",\"v\":{v}}}").as_bytes());
                }
                let raw = String::from_utf8(raw).map_err(de::Error::custom)?;
                return Ok(AgentMessage::Unknown(UnknownMessage {
                    raw,
                    bytes: None,
                    kind: KeptKind::Owned(kind.to_owned()),
                    reason,
                    parsed: OnceLock::from(FullParse {
                        id: envelope.id,
                        turn_id: envelope.turn_id,
                        error: None,
                    }),
                }));
            }
        };
        let envelope = envelope.take();
        if let Some(v) = envelope.v {
            return Err(crate::message::unversioned(v, role));
        }
        Ok(AgentMessage::Llm(LlmMessage {
            message,
            id: envelope.id,
            turn_id: envelope.turn_id,
        }))
    }
}

fn unregistered_reason(registry: &Registry, kind: &str) -> UnknownReason {
    match registry.duplicate(kind) {
        Some(dup) => UnknownReason::AmbiguousKind {
            first: dup.first,
            second: dup.second,
        },
        None => UnknownReason::UnknownKind,
    }
}

/// How a reader treats a line it cannot decode into its type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeMode {
    /// Keep it as [`AgentMessage::Unknown`] (the default).
    #[default]
    Lenient,
    /// Report it as an error.
    Strict,
}

/// A line could not be decoded (and, in lenient mode, could not be kept either).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The line is not one JSON object.
    #[error("not a JSON object: {0}")]
    NotJson(String),
    /// The object has no `"role"`.
    #[error("the object has no \"role\"")]
    MissingRole,
    /// The `"role"` is not a string.
    #[error("\"role\" is not a string")]
    RoleNotString,
    /// The `"role"` is a string whose escapes are not Unicode text (a lone
    /// surrogate).
    #[error("\"role\" is not valid text: {0}")]
    RoleNotText(String),
    /// Strict mode: the line would have been kept as `Unknown`.
    #[error("kind `{kind}`: {reason}")]
    Rejected {
        /// The `"role"` of the line.
        kind: String,
        /// Why it was not decoded.
        reason: UnknownReason,
    },
}

/// Decodes one transcript line (a flat JSON object, without its newline).
///
/// The kind is read from the `{"role":"` prefix when the role comes first (as the
/// writer puts it), otherwise found by a scan of the top-level keys that does not
/// allocate; the line is then decoded once, straight into its type. In lenient
/// mode an unregistered kind, a newer version or a body that fails to decode is
/// kept as [`AgentMessage::Unknown`] with the exact bytes; in strict mode it is
/// [`DecodeError::Rejected`].
pub fn decode_line(
    line: &str,
    registry: &Registry,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    // Most lines are LLM messages written by us, role first.
    if let Some(role) = llm_role_first(line) {
        return decode_llm(line, role, mode);
    }
    let kind = match role_of(line) {
        Some(Ok(kind)) => kind,
        Some(Err(())) => {
            serde_json::from_str::<IgnoredAny>(line)
                .map_err(|e| DecodeError::NotJson(e.to_string()))?;
            // A string whose escapes are not Unicode (a lone surrogate) is still
            // a string: say what is wrong with it.
            if let Some(role) = top_level_value(line, "role").filter(|v| v.starts_with('"')) {
                if let Err(e) = serde_json::from_str::<String>(role) {
                    return Err(DecodeError::RoleNotText(e.to_string()));
                }
            }
            return Err(DecodeError::RoleNotString);
        }
        None => {
            serde_json::from_str::<IgnoredAny>(line)
                .map_err(|e| DecodeError::NotJson(e.to_string()))?;
            return Err(if line.trim_start().starts_with('{') {
                DecodeError::MissingRole
            } else {
                DecodeError::NotJson("expected a JSON object".to_owned())
            });
        }
    };
    if let Some(role) = Role::from_name(&kind) {
        return decode_llm(line, role, mode);
    }
    let reason = match registry.get(&kind) {
        Some(registration) => match registration.decode_line(line) {
            Ok(entry) => return Ok(AgentMessage::Custom(entry)),
            Err(reason) => reason,
        },
        None => unregistered_reason(registry, &kind),
    };
    not_decoded(line, kind, reason, mode)
}

fn invalid(error: &serde_json::Error) -> UnknownReason {
    UnknownReason::Invalid {
        error: error.to_string(),
    }
}

/// A line of `kind` that was not decoded for `reason`: kept (lenient) or an
/// error (strict).
fn not_decoded(
    line: &str,
    kind: Cow<'_, str>,
    reason: UnknownReason,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    match (mode, &reason) {
        (DecodeMode::Strict, _) => Err(DecodeError::Rejected {
            kind: kind.into_owned(),
            reason,
        }),
        // No decoder ran: keep the bytes at the cost of a copy, parse on first use.
        (
            DecodeMode::Lenient,
            UnknownReason::UnknownKind
            | UnknownReason::AmbiguousKind { .. }
            | UnknownReason::NewerVersion { .. },
        ) => UnknownMessage::keep_unparsed(line, kind, reason).map(AgentMessage::Unknown),
        // A decoder ran and failed: tell a syntax error from a body of the wrong shape.
        (DecodeMode::Lenient, _) => {
            let kind = kind.into_owned();
            UnknownMessage::keep(line.to_owned(), kind, reason).map(AgentMessage::Unknown)
        }
    }
}

/// Decodes an LLM line whose role is already known, straight into its type; a
/// line that does not decode is kept or rejected as `mode` says.
fn decode_llm(line: &str, role: Role, mode: DecodeMode) -> Result<AgentMessage, DecodeError> {
    match role {
        Role::User => decode_line_form::<line::UserLine>(line, mode),
        Role::Assistant => decode_line_form::<line::AssistantLine>(line, mode),
        Role::ToolResult => decode_line_form::<line::ToolResultLine>(line, mode),
        Role::System => decode_line_form::<line::SystemLine>(line, mode),
    }
}

/// The LLM role of a line that starts `{"role":"<role>"`, as our writer puts it.
/// (Fixed comparisons: this runs on every line.)
fn llm_role_first(line: &str) -> Option<Role> {
    let rest = line.as_bytes().strip_prefix(b"{\"role\":\"")?;
    match rest.first()? {
        b'a' if rest.starts_with(b"assistant\"") => Some(Role::Assistant),
        b't' if rest.starts_with(b"toolResult\"") => Some(Role::ToolResult),
        b'u' if rest.starts_with(b"user\"") => Some(Role::User),
        b's' if rest.starts_with(b"system\"") => Some(Role::System),
        _ => None,
    }
}

/// Decodes a line in its role's wire form (the message's fields and the
/// envelope keys, in one derived decoder; see `message::line`). Not inlined:
/// one compact function per role keeps the hot code of a line together, which
/// measurably cuts instruction-cache misses. It returns `decode_line`'s own
/// result, with the error paths out of line, so a decoded message is not copied
/// again on its way out (66 fewer instructions per LLM line under callgrind).
#[inline(never)]
fn decode_line_form<'de, L: line::LineForm<'de>>(
    line: &'de str,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    match serde_json::from_str::<L>(line) {
        Ok(form) => match form.into_message() {
            Ok(message) => Ok(AgentMessage::Llm(message)),
            Err(v) => {
                let error = crate::message::unversioned(v, L::ROLE.as_str());
                llm_not_decoded(line, L::ROLE, &error, mode)
            }
        },
        Err(e) => llm_not_decoded(line, L::ROLE, &e, mode),
    }
}

/// An LLM line that did not decode: kept or rejected as `mode` says.
#[cold]
#[inline(never)]
fn llm_not_decoded(
    line: &str,
    role: Role,
    error: &serde_json::Error,
    mode: DecodeMode,
) -> Result<AgentMessage, DecodeError> {
    not_decoded(line, Cow::Borrowed(role.as_str()), invalid(error), mode)
}

/// Decodes a whole line as `T` when its role is already known (`accept` says
/// which roles are `T`'s), wherever the role stands: the role key is checked and
/// skipped and the envelope keys are taken out while `T` reads the other keys, so
/// nothing is held back or decoded twice. `T` is given its keys as transient
/// strings (`T` is a registered, `DeserializeOwned` type).
pub(crate) fn decode_known<'de, T: Deserialize<'de>>(
    line: &'de str,
    accept: &dyn Fn(&str) -> bool,
) -> serde_json::Result<(T, Envelope)> {
    let mut de = serde_json::Deserializer::from_str(line);
    let decoded = de::Deserializer::deserialize_map(
        &mut de,
        KnownRole {
            accept,
            marker: std::marker::PhantomData,
        },
    )?;
    de.end()?;
    Ok(decoded)
}

struct KnownRole<'a, T> {
    accept: &'a dyn Fn(&str) -> bool,
    marker: std::marker::PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> de::Visitor<'de> for KnownRole<'_, T> {
    type Value = (T, Envelope);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object with a \"role\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(T, Envelope), A::Error> {
        let state = RefCell::new((Envelope::default(), false));
        let body = SkipRole {
            inner: map,
            accept: self.accept,
            state: &state,
        };
        let value = T::deserialize(de::value::MapAccessDeserializer::new(body))?;
        let (envelope, role_seen) = state.into_inner();
        if !role_seen {
            return Err(de::Error::missing_field("role"));
        }
        Ok((value, envelope))
    }
}

/// The entries of a line less `role` (checked) and the envelope keys (kept).
struct SkipRole<'s, A> {
    inner: A,
    accept: &'s dyn Fn(&str) -> bool,
    state: &'s RefCell<(Envelope, bool)>,
}

impl<'de, A: MapAccess<'de>> SkipRole<'_, A> {
    /// The next key of the type's own: the part of `next_key_seed` that does not
    /// depend on the seed, so it is compiled once, not once per custom type.
    fn next_own_key(&mut self) -> Result<Option<Key<'de>>, A::Error> {
        loop {
            let Some(key) = self.inner.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            match key.as_str() {
                "role" => {
                    let role: Key<'de> = self.inner.next_value()?;
                    let mut state = self.state.borrow_mut();
                    if state.1 {
                        return Err(de::Error::duplicate_field("role"));
                    }
                    if !(self.accept)(role.as_str()) {
                        return Err(de::Error::custom(format_args!(
                            "unexpected role `{}`",
                            role.as_str()
                        )));
                    }
                    state.1 = true;
                }
                other => {
                    if !self.state.borrow_mut().0.read(other, &mut self.inner)? {
                        return Ok(Some(key));
                    }
                }
            }
        }
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for SkipRole<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        match self.next_own_key()? {
            // One key deserializer for every type: the registry's types are
            // `DeserializeOwned`, so none borrows a key.
            Some(key) => seed
                .deserialize(de::value::StrDeserializer::new(key.as_str()))
                .map(Some),
            None => Ok(None),
        }
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, A::Error> {
        self.inner.next_value_seed(seed)
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The `"role"` of a line: `None` when there is none (or the line is not an
/// object), `Some(Err(()))` when it is not a string.
pub(crate) fn role_of(line: &str) -> Option<Result<Cow<'_, str>, ()>> {
    if let Some(rest) = line.strip_prefix("{\"role\":\"") {
        let end = memchr::memchr2(b'"', b'\\', rest.as_bytes());
        if let Some(end) = end {
            if rest.as_bytes()[end] == b'"' {
                if let Some(kind) = rest.get(..end) {
                    return Some(Ok(Cow::Borrowed(kind)));
                }
            }
        }
    }
    if let Some(kind) = role_at_end(line) {
        return Some(Ok(Cow::Borrowed(kind)));
    }
    let value = top_level_value(line, "role")?;
    if !value.starts_with('"') {
        return Some(Err(()));
    }
    Some(unquote(value).ok_or(()))
}

/// The role of a line that ends with `"role":"kind"}` (as a writer that puts the
/// role last writes it), found from the end without a scan. `None` when the line
/// does not end that way or anything is unusual (escapes, a backslash before a
/// quote); the full scan then decides. The decoder checks the role it meets
/// against the one found, so a wrong guess is an error, never a wrong type.
fn role_at_end(line: &str) -> Option<&str> {
    let body = line.trim_end().strip_suffix('}')?.trim_end();
    let body = body.strip_suffix('"')?;
    let open = body.rfind(['"', '\\'])?;
    if body.as_bytes().get(open) != Some(&b'"') {
        return None;
    }
    let kind = body.get(open + 1..)?;
    let before = body.get(..open)?.trim_end().strip_suffix(':')?.trim_end();
    let before = before.strip_suffix("\"role\"")?;
    if before.ends_with('\\') {
        return None;
    }
    let before = before.trim_end();
    (before.ends_with(',') || before.ends_with('{')).then_some(kind)
}

/// The `"v"` of a line, when it is a number that fits a `u32`.
pub(crate) fn scan_version(line: &str) -> Option<u32> {
    top_level_value(line, "v")?.parse().ok()
}

/// The text of a JSON string token, unescaped only when it has escapes.
fn unquote(token: &str) -> Option<Cow<'_, str>> {
    let inner = token.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(token).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// The raw text of the value of the top-level `key` in a JSON object, found
/// without allocating (unless a key has escapes). `None` when the key is absent or
/// the text is not an object; the scan does not validate the JSON fully.
fn top_level_value<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let bytes = text.as_bytes();
    let mut i = skip_ws(bytes, 0);
    if bytes.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i)? {
            b'}' => return None,
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return None,
        }
        let key_end = skip_string(bytes, i)?;
        let found = text.get(i..key_end).and_then(unquote)? == key;
        i = skip_ws(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(bytes, i + 1);
        let value_end = skip_value(bytes, i)?;
        if found {
            return text.get(i..value_end);
        }
        i = value_end;
    }
}

fn skip_ws(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        i += 1;
    }
    i
}

/// The index just past the string that starts at `i` (on its opening quote).
fn skip_string(bytes: &[u8], mut i: usize) -> Option<usize> {
    i += 1;
    loop {
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The index just past the value that starts at `i`.
fn skip_value(bytes: &[u8], i: usize) -> Option<usize> {
    match bytes.get(i)? {
        b'"' => skip_string(bytes, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match bytes.get(j)? {
                    b'"' => {
                        j = skip_string(bytes, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while let Some(b) = bytes.get(j) {
                if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    break;
                }
                j += 1;
            }
            (j > i).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn scan_finds_top_level_keys_only() {
        let line = r#"{"a":{"role":"inner","v":9},"b":["role",{"v":3}],"s":"\"role\":\"x\"","role":"notice","v":2}"#;
        assert_eq!(role_of(line), Some(Ok(Cow::Borrowed("notice"))));
        assert_eq!(scan_version(line), Some(2));
        assert_eq!(role_of(r#"{"x":1}"#), None);
        assert_eq!(role_of(r#"{"role":5}"#), Some(Err(())));
        assert_eq!(
            role_of(r#"{"role":"a\"b"}"#),
            Some(Ok(Cow::Owned("a\"b".into())))
        );
        assert_eq!(
            role_of(r#"{"r\u006fle":"esc"}"#),
            Some(Ok(Cow::Borrowed("esc")))
        );
        assert_eq!(role_of("[1]"), None);
        assert_eq!(role_of(r#"{"a":"#), None);
        assert_eq!(scan_version(r#"{"v":"2"}"#), None);
        // From the end.
        assert_eq!(role_at_end(r#"{"a":1,"role":"late"}"#), Some("late"));
        assert_eq!(
            role_at_end(r#"{ "a" : 1 , "role" : "late" } "#),
            Some("late")
        );
        assert_eq!(role_at_end(r#"{"role":"only"}"#), Some("only"));
        assert_eq!(role_at_end(r#"{"a":{"role":"inner"}}"#), None);
        assert_eq!(role_at_end(r#"{"x\"role":"k"}"#), None);
        assert_eq!(role_at_end(r#"{"a":"b\"role\":\"k"}"#), None);
        assert_eq!(role_at_end(r#"{"a":["role":"k"}"#), None);
        assert_eq!(role_at_end(r#"{"a":1,"role":"a\"b"}"#), None);
        assert_eq!(
            role_of(r#"{"a":{"role":"inner"},"role":"outer"}"#),
            Some(Ok(Cow::Borrowed("outer")))
        );
    }

    #[test]
    fn scan_survives_malformed_input() {
        for text in [
            "{",
            "{\"",
            "{\"a\"",
            "{\"a\":",
            "{\"a\":[",
            "{\"a\":}",
            "}",
            "{\"a\":\"\\",
            "{,,}",
        ] {
            let _ = role_of(text);
            let _ = scan_version(text);
        }
    }
}
