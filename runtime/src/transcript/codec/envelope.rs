//! The envelope of a transcript line: the keys around a type's own fields
//! (`role`, `id`, `turnId`, `parentId`, `v`, and a custom line's `timestamp`). This file is the one reader and writer of
//! those keys, on every path:
//!
//! - streamed objects: [`deserialize_flat`] finds the role (at once when it
//!   comes first, as our writer puts it; otherwise the entries before it are held
//!   back and replayed), then hands the rest of the same map to the concrete
//!   type's own `Deserialize`, taking the envelope keys out on the way, so
//!   nothing is decoded twice;
//! - whole lines of a known kind: [`decode_known`];
//! - the line forms of the LLM roles, which name the keys as fields of one
//!   derived struct (the fastest way serde has to read such a line);
//! - scans of a line's text that find its role or version without parsing it;
//! - kept lines, whose `id` and `turnId` are read on first use;
//! - writing: [`Envelope::write`] after a type's fields.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::Deserialize;

use serde::Serialize;

use super::body::{Body, LineFields, ReadValue};
use super::flat_serializer::FlatMapSerializer;
use super::held::Held;
use super::value::Seed;
use crate::json::key::Key;
use crate::json::scan::{top_level_value, unquote};
use crate::message::{
    present_value, text_blocks, tool_result_blocks, user_blocks, AssistantMessage, Message,
    MessageId, ParentId, StopReason, SystemMessage, ToolResultMessage, TurnId, UserMessage,
};
use crate::{
    AssistantContent, LlmMessage, Role, TextContent, ToolResultContent, Usage, UserContent,
};

/// The envelope keys of a line, taken out of the object while it is decoded.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Envelope {
    /// `"id"`
    pub id: Option<MessageId>,
    /// `"turnId"`
    pub turn_id: Option<TurnId>,
    /// `"parentId"`: absent, `null` or an id.
    pub parent_id: ParentId,
    /// `"v"`, the kind's schema version.
    pub v: Option<u32>,
    /// `"timestamp"` of a custom line whose type has no timestamp field of its
    /// own (an LLM message's `timestamp` is one of its fields).
    pub timestamp: Option<u64>,
}

/// Where the envelope keys land while the body is decoded.
#[derive(Debug, Default)]
pub struct EnvelopeSlot(RefCell<Envelope>);

impl EnvelopeSlot {
    /// Takes the envelope read so far.
    pub fn take(&self) -> Envelope {
        self.0.take()
    }
}

/// Decodes the body of a line once its role is known.
pub trait RoleDispatch<'de> {
    /// What the line decodes to.
    type Value;

    /// Decodes the rest of the object, `map`, as the type of `role`. The envelope
    /// keys are in `envelope` once `map` has been read to its end.
    fn dispatch<M: MapAccess<'de>>(
        self,
        role: &str,
        map: M,
        envelope: &EnvelopeSlot,
    ) -> Result<Self::Value, M::Error>;
}

/// Decodes one flat object through `dispatch`.
pub fn deserialize_flat<'de, D, R>(deserializer: D, dispatch: R) -> Result<R::Value, D::Error>
where
    D: Deserializer<'de>,
    R: RoleDispatch<'de>,
{
    deserializer.deserialize_map(FlatVisitor { dispatch })
}

struct FlatVisitor<R> {
    dispatch: R,
}

impl<'de, R: RoleDispatch<'de>> Visitor<'de> for FlatVisitor<R> {
    type Value = R::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object with a \"role\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<R::Value, A::Error> {
        let slot = EnvelopeSlot::default();
        let mut held: Vec<(Key<'de>, Held<'de>)> = Vec::new();
        while let Some(key) = map.next_key::<Key<'de>>()? {
            match key.as_str() {
                "role" => {
                    let role: Key<'de> = map.next_value()?;
                    let rest = FlatMap {
                        held: held.into_iter(),
                        pending: None,
                        inner: map,
                        slot: &slot,
                    };
                    return self.dispatch.dispatch(role.as_str(), rest, &slot);
                }
                other => {
                    if !capture_envelope(other, &mut map, &slot)? {
                        let value: Held<'de> = map.next_value()?;
                        held.push((key, value));
                    }
                }
            }
        }
        Err(de::Error::missing_field("role"))
    }
}

impl Envelope {
    /// Reads the value of `key` from `map` when it is an envelope key (`id`,
    /// `turnId`, `v`); false, reading nothing, when it is not. The one reader
    /// of these keys in a streamed object (the line forms of the LLM roles name
    /// them as serde fields, `message::line`).
    #[inline]
    pub(crate) fn read<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error> {
        match key {
            "id" => self.id = map.next_value::<Option<MessageId>>()?,
            "turnId" => self.turn_id = map.next_value::<Option<TurnId>>()?,
            "parentId" => self.parent_id = map.next_value::<ParentId>()?,
            "v" => self.v = Some(map.next_value::<u32>()?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Takes the role and the envelope keys out of a decoded object.
    pub(crate) fn take_from(
        fields: &mut serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Result<Self> {
        let mut envelope = Self::default();
        fields.remove("role");
        if let Some(id) = fields.remove("id") {
            envelope.id = Option::<MessageId>::deserialize(id)?;
        }
        if let Some(turn_id) = fields.remove("turnId") {
            envelope.turn_id = Option::<TurnId>::deserialize(turn_id)?;
        }
        if let Some(parent_id) = fields.remove("parentId") {
            envelope.parent_id = ParentId::deserialize(parent_id)?;
        }
        if let Some(v) = fields.remove("v") {
            envelope.v = Some(u32::deserialize(v)?);
        }
        Ok(envelope)
    }

    /// Takes a custom line's `"timestamp"` out of a decoded object (for a type
    /// without a timestamp field of its own).
    pub(crate) fn take_timestamp_from(
        &mut self,
        fields: &mut serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Result<()> {
        if let Some(timestamp) = fields.remove("timestamp") {
            self.timestamp = Some(u64::deserialize(timestamp).map_err(bad_timestamp)?);
        }
        Ok(())
    }

    /// Takes a custom line's `"timestamp"` out of a held object (for a type
    /// without a timestamp field of its own).
    pub(crate) fn take_timestamp_from_held(&mut self, fields: &mut Held<'_>) -> Result<(), String> {
        let Held::Map(entries) = fields else {
            return Ok(());
        };
        let Some(at) = entries.iter().position(|(key, _)| {
            matches!(key, Held::Str("timestamp"))
                || matches!(key, Held::String(k) if k == "timestamp")
        }) else {
            return Ok(());
        };
        let (_, value) = entries.remove(at);
        self.timestamp = Some(match value {
            Held::U64(n) => n,
            other => {
                let value = serde_json::Value::deserialize(other.replay()).map_or_else(
                    |_: serde_json::Error| "a value".to_owned(),
                    |v| v.to_string(),
                );
                return Err(format!(
                    "`timestamp` must be Unix milliseconds (an unsigned integer), found {value}"
                ));
            }
        });
        Ok(())
    }

    /// Writes the envelope keys after a line's fields: `id` and `turnId` when
    /// set, `parentId` unless it is [`ParentId::Previous`], `v` when `version`
    /// is above 1. The one writer of these keys.
    #[inline]
    pub(crate) fn write<M: SerializeMap>(
        map: &mut M,
        id: Option<&MessageId>,
        turn_id: Option<&TurnId>,
        parent_id: &ParentId,
        version: u32,
    ) -> Result<(), M::Error> {
        if let Some(id) = id {
            map.serialize_entry("id", id)?;
        }
        if let Some(turn_id) = turn_id {
            map.serialize_entry("turnId", turn_id)?;
        }
        if !parent_id.is_previous() {
            map.serialize_entry("parentId", parent_id)?;
        }
        if version > 1 {
            map.serialize_entry("v", &version)?;
        }
        Ok(())
    }
}

impl Envelope {
    /// Appends the JSON object `object` (its text kept byte for byte, the
    /// whitespace around it trimmed) to `out` with the envelope keys after
    /// its own: `id` when given, `parentId` unless it is
    /// [`ParentId::Previous`]. The one writer of these keys into an object
    /// kept as it was written (an imported entry's message, an `extension`
    /// line around an entry).
    pub(crate) fn append_to_object(
        out: &mut Vec<u8>,
        object: &str,
        id: Option<&MessageId>,
        parent_id: &ParentId,
    ) -> serde_json::Result<()> {
        let object = object.trim();
        let body = object.strip_suffix('}').unwrap_or(object).trim_end();
        out.extend_from_slice(body.as_bytes());
        let mut first = body.ends_with('{');
        let mut key = |out: &mut Vec<u8>, name: &str| {
            if !first {
                out.push(b',');
            }
            first = false;
            out.push(b'"');
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b"\":");
        };
        if let Some(id) = id {
            key(out, "id");
            serde_json::to_writer(&mut *out, id)?;
        }
        if !parent_id.is_previous() {
            key(out, "parentId");
            serde_json::to_writer(&mut *out, parent_id)?;
        }
        out.push(b'}');
        Ok(())
    }

    /// Puts `"v"` back at the end of a re-encoded object (`raw` ends with its
    /// `}`) exactly as it was read, even when it is 1.
    pub(crate) fn append_version_as_read(raw: &mut Vec<u8>, v: u32) {
        if raw.last() == Some(&b'}') {
            raw.pop();
            raw.extend_from_slice(format!(",\"v\":{v}}}").as_bytes());
        }
    }
}

/// The error of a custom line's `timestamp` that is not Unix milliseconds.
fn bad_timestamp<E: fmt::Display>(error: E) -> serde_json::Error {
    de::Error::custom(format_args!(
        "`timestamp` must be Unix milliseconds (an unsigned integer): {error}"
    ))
}

/// Writes `role`, the fields of `fields`, a custom line's `timestamp`, then the
/// envelope keys, as one map.
pub(crate) fn write_line<T, S>(
    serializer: S,
    kind: &str,
    fields: &T,
    (id, turn_id, parent_id): (Option<&MessageId>, Option<&TurnId>, &ParentId),
    version: u32,
    timestamp: Option<u64>,
) -> Result<S::Ok, S::Error>
where
    T: ?Sized + Serialize,
    S: serde::Serializer,
{
    let mut map = serializer.serialize_map(None)?;
    map.serialize_entry("role", kind)?;
    fields.serialize(FlatMapSerializer(&mut map))?;
    if let Some(timestamp) = timestamp {
        map.serialize_entry("timestamp", &timestamp)?;
    }
    Envelope::write(&mut map, id, turn_id, parent_id, version)?;
    map.end()
}

/// Reads the value of an envelope key into `slot`; false when `key` is not one.
fn capture_envelope<'de, A: MapAccess<'de>>(
    key: &str,
    map: &mut A,
    slot: &EnvelopeSlot,
) -> Result<bool, A::Error> {
    slot.0.borrow_mut().read(key, map)
}

/// The rest of a flat object after its role: the entries held back, then the
/// remaining entries, less the envelope keys.
struct FlatMap<'de, 's, A> {
    held: std::vec::IntoIter<(Key<'de>, Held<'de>)>,
    pending: Option<Held<'de>>,
    inner: A,
    slot: &'s EnvelopeSlot,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for FlatMap<'de, '_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        if let Some((key, value)) = self.held.next() {
            self.pending = Some(value);
            return key.give_to(seed).map(Some);
        }
        loop {
            let Some(key) = self.inner.next_key::<Key<'de>>()? else {
                return Ok(None);
            };
            if key.as_str() == "role" {
                return Err(de::Error::duplicate_field("role"));
            }
            if capture_envelope(key.as_str(), &mut self.inner, self.slot)? {
                continue;
            }
            return match key {
                Key::Borrowed(s) => seed.deserialize(BorrowedStrDeserializer::new(s)),
                Key::Owned(s) => seed.deserialize(StringDeserializer::new(s)),
            }
            .map(Some);
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        match self.pending.take() {
            Some(value) => seed.deserialize(value.replay()),
            None => self.inner.next_value_seed(seed),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// The `id`, `turnId` and `parentId` of a kept line.
pub(crate) struct KeptHead {
    pub(crate) id: Option<MessageId>,
    pub(crate) turn_id: Option<TurnId>,
    pub(crate) parent_id: ParentId,
}

impl KeptHead {
    /// Reads them from the raw text of a kept line; an error when the text is
    /// not one JSON object (other values of the keys are skipped).
    pub(crate) fn read(raw: &str) -> serde_json::Result<Self> {
        let head: UnknownHead = serde_json::from_str(raw)?;
        Ok(Self {
            id: head.id.and_then(|s| s.0).map(MessageId::from),
            turn_id: head.turn_id.and_then(|s| s.0).map(TurnId::from),
            parent_id: match head.parent_id {
                None => ParentId::Previous,
                Some(MaybeString(Some(id))) => ParentId::Id(MessageId::from(id)),
                Some(MaybeString(None)) => ParentId::Root,
            },
        })
    }
}

/// The `id` and `turnId` of a kept line; everything else is skipped.
#[derive(Deserialize)]
struct UnknownHead {
    #[serde(default)]
    id: Option<MaybeString>,
    #[serde(default, rename = "turnId")]
    turn_id: Option<MaybeString>,
    /// `Some` when the key is present, even as `null` (a root).
    #[serde(default, rename = "parentId", deserialize_with = "present")]
    parent_id: Option<MaybeString>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<MaybeString>, D::Error> {
    MaybeString::deserialize(d).map(Some)
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

/// The LLM role of a line that starts `{"role":"<role>"`, as our writer puts it.
/// (Fixed comparisons: this runs on every line.)
pub(crate) fn llm_role_first(line: &str) -> Option<Role> {
    let rest = line.as_bytes().strip_prefix(b"{\"role\":\"")?;
    match rest.first()? {
        b'a' if rest.starts_with(b"assistant\"") => Some(Role::Assistant),
        b't' if rest.starts_with(b"toolResult\"") => Some(Role::ToolResult),
        b'u' if rest.starts_with(b"user\"") => Some(Role::User),
        b's' if rest.starts_with(b"system\"") => Some(Role::System),
        _ => None,
    }
}

/// A type's decoder: its `Deserialize` on a [`Body`].
pub(crate) type DecodeBody<R> = fn(Body<'_, '_>) -> serde_json::Result<R>;

/// Decodes a whole line through `decode` when its role is already known
/// (`accept` says which roles are the type's), wherever the role stands: the
/// role key is checked and skipped and the envelope keys are taken out while the
/// type reads the other keys, so nothing is held back or decoded twice.
pub(crate) fn decode_known<R>(
    line: &str,
    accept: &dyn Fn(&str) -> bool,
    decode: DecodeBody<R>,
    take_timestamp: bool,
) -> serde_json::Result<(R, Envelope)> {
    let raised = Raised::default();
    let mut de = serde_json::Deserializer::from_str(line);
    let visitor = KnownRole {
        accept,
        decode,
        raised: &raised,
        take_timestamp,
    };
    match de::Deserializer::deserialize_map(&mut de, visitor) {
        Ok(decoded) => {
            de.end()?;
            Ok(decoded)
        }
        Err(error) => Err(raised.or(error)),
    }
}

/// The error the line raised under a decoder, by its text. serde_json's error
/// says where it happened, but the decoder reads values through object-safe
/// calls (`value`), so it comes back as text, without its position, and
/// serde_json would then set that to the object's end. When the decoder fails
/// with it, its text is the error.
#[derive(Default)]
struct Raised {
    text: RefCell<Option<String>>,
    failed_with_it: std::cell::Cell<bool>,
}

impl Raised {
    #[cold]
    fn or(self, error: serde_json::Error) -> serde_json::Error {
        match self.text.into_inner() {
            Some(text) if self.failed_with_it.get() => de::Error::custom(text),
            _ => error,
        }
    }
}

struct KnownRole<'a, R> {
    accept: &'a dyn Fn(&str) -> bool,
    decode: DecodeBody<R>,
    raised: &'a Raised,
    take_timestamp: bool,
}

impl<'de, R> de::Visitor<'de> for KnownRole<'_, R> {
    type Value = (R, Envelope);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object with a \"role\"")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<(R, Envelope), A::Error> {
        let mut fields = SkipRole {
            inner: map,
            accept: self.accept,
            envelope: Envelope::default(),
            role_seen: false,
            raised: &self.raised.text,
            take_timestamp: self.take_timestamp,
        };
        let value = match (self.decode)(Body::line(&mut fields)) {
            Ok(value) => value,
            Err(error) => return Err(self.unerased(&error)),
        };
        if !fields.role_seen {
            return Err(de::Error::missing_field("role"));
        }
        Ok((value, fields.envelope))
    }
}

impl<R> KnownRole<'_, R> {
    /// The error of a decoder that failed, noting whether it is the line's own.
    #[cold]
    fn unerased<E: de::Error>(&self, error: &serde_json::Error) -> E {
        let text = error.to_string();
        let raised = self.raised.text.borrow();
        self.raised
            .failed_with_it
            .set(raised.as_deref() == Some(text.as_str()));
        de::Error::custom(text)
    }
}

/// The entries of a line less `role` (checked) and the envelope keys (kept).
struct SkipRole<'s, A> {
    inner: A,
    accept: &'s dyn Fn(&str) -> bool,
    envelope: Envelope,
    role_seen: bool,
    /// The text of the last error the line raised.
    raised: &'s RefCell<Option<String>>,
    /// Whether `timestamp` is an envelope key (a type without a timestamp
    /// field of its own).
    take_timestamp: bool,
}

impl<'de, A: MapAccess<'de>> SkipRole<'_, A> {
    /// Notes the text of an error the line raised and gives it to the decoder.
    #[cold]
    fn raise(&self, error: A::Error) -> serde_json::Error {
        let text = error.to_string();
        *self.raised.borrow_mut() = Some(text.clone());
        de::Error::custom(text)
    }
}

impl<'de, A: MapAccess<'de>> LineFields<'de> for SkipRole<'_, A> {
    fn next_key(&mut self) -> serde_json::Result<Option<Key<'de>>> {
        loop {
            let Some(key) = self
                .inner
                .next_key::<Key<'de>>()
                .map_err(|e| self.raise(e))?
            else {
                return Ok(None);
            };
            match key.as_str() {
                "role" => {
                    let role: Key<'de> = self.inner.next_value().map_err(|e| self.raise(e))?;
                    if self.role_seen {
                        return Err(de::Error::duplicate_field("role"));
                    }
                    if !(self.accept)(role.as_str()) {
                        return Err(de::Error::custom(format_args!(
                            "unexpected role `{}`",
                            role.as_str()
                        )));
                    }
                    self.role_seen = true;
                }
                "timestamp" if self.take_timestamp => {
                    let timestamp = self.inner.next_value::<u64>().map_err(|e| {
                        self.raise(de::Error::custom(format_args!(
                            "`timestamp` must be Unix milliseconds (an unsigned integer): {e}"
                        )))
                    })?;
                    self.envelope.timestamp = Some(timestamp);
                }
                other => {
                    let read = self.envelope.read(other, &mut self.inner);
                    if !read.map_err(|e| self.raise(e))? {
                        return Ok(Some(key));
                    }
                }
            }
        }
    }

    fn next_value(&mut self, read: ReadValue<'_, 'de>) -> serde_json::Result<()> {
        self.inner
            .next_value_seed(Seed(read))
            .map_err(|e| self.raise(e))
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

/// The raw text of a line's top-level `"role"` value, when it has one.
pub(crate) fn role_token(line: &str) -> Option<&str> {
    top_level_value(line, "role")
}

/// The `"v"` of a line, when it is a number that fits a `u32`.
pub(crate) fn scan_version(line: &str) -> Option<u32> {
    top_level_value(line, "v")?.parse().ok()
}

// The line forms of the LLM roles.

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

#[cfg(test)]
mod tests {
    use super::*;

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
