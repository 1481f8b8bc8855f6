//! The flat object of a transcript line: a `"role"` that says which type the rest
//! of the object is, the envelope keys (`id`, `turnId`, `parentId`, `v`) beside the type's own
//! fields, and nothing nested.
//!
//! [`Envelope`] reads and writes the envelope keys for every path but one: the
//! line forms of the LLM roles (`message::line`), which decode them as fields
//! of one derived struct for speed.
//!
//! Reading: [`deserialize_flat`] finds the role (at once when it comes first, as our
//! writer puts it; otherwise the entries before it are held back and replayed), then
//! hands the rest of the same map to the concrete type's own `Deserialize`, taking
//! the envelope keys out on the way. Nothing is decoded twice.
//!
//! Writing: [`FlatMapSerializer`] lets a type's own `Serialize` write its fields
//! into a map that the caller has opened, so the caller can put the role before and
//! the envelope after.

use std::cell::RefCell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{BorrowedStrDeserializer, StringDeserializer};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde::ser::{self, Impossible, Serialize, SerializeMap, Serializer};

use crate::held::Held;
use crate::message::{MessageId, ParentId, TurnId};

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
    /// `turnId`, `parentId`, `v`); false, reading nothing, when it is not. The one reader
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

    /// Takes the envelope keys out of a decoded object.
    pub(crate) fn take_from(
        fields: &mut serde_json::Map<String, serde_json::Value>,
    ) -> serde_json::Result<Self> {
        use serde::Deserialize as _;
        let mut envelope = Self::default();
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

/// A key or short string, borrowed from the input when it can be.
pub(crate) enum Key<'de> {
    Borrowed(&'de str),
    Owned(String),
}

impl Key<'_> {
    pub(crate) fn as_str(&self) -> &str {
        match self {
            Key::Borrowed(s) => s,
            Key::Owned(s) => s,
        }
    }

    pub(crate) fn into_string(self) -> String {
        match self {
            Key::Borrowed(s) => s.to_owned(),
            Key::Owned(s) => s,
        }
    }
}

impl<'de> Key<'de> {
    /// Hands the key to `seed` (a map's key reader), borrowed when it was.
    pub(crate) fn give_to<K: de::DeserializeSeed<'de>, E: de::Error>(
        self,
        seed: K,
    ) -> Result<K::Value, E> {
        match self {
            Key::Borrowed(s) => seed.deserialize(de::value::BorrowedStrDeserializer::new(s)),
            Key::Owned(s) => seed.deserialize(de::value::StringDeserializer::new(s)),
        }
    }
}

impl<'de> de::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor<'de>(PhantomData<&'de ()>);
        impl<'de> Visitor<'de> for KeyVisitor<'de> {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key::Borrowed(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Key<'de>, E> {
                Ok(Key::Owned(v))
            }
        }
        deserializer.deserialize_str(KeyVisitor(PhantomData))
    }
}

/// A `Serializer` that writes a struct's (or a map's) entries into a map the caller
/// has opened. Anything other than a struct or a map is an error.
pub struct FlatMapSerializer<'a, M>(pub &'a mut M);

fn not_flat<E: ser::Error>(what: &str) -> E {
    E::custom(format_args!(
        "a transcript line must serialize as a struct or a map, not {what}"
    ))
}

impl<'a, M: SerializeMap> Serializer for FlatMapSerializer<'a, M> {
    type Ok = ();
    type Error = M::Error;
    type SerializeSeq = Impossible<(), M::Error>;
    type SerializeTuple = Impossible<(), M::Error>;
    type SerializeTupleStruct = Impossible<(), M::Error>;
    type SerializeTupleVariant = Impossible<(), M::Error>;
    type SerializeMap = FlatEntries<'a, M>;
    type SerializeStruct = FlatEntries<'a, M>;
    type SerializeStructVariant = Impossible<(), M::Error>;

    fn serialize_bool(self, _: bool) -> Result<(), M::Error> {
        Err(not_flat("a bool"))
    }
    fn serialize_i8(self, _: i8) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_i16(self, _: i16) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_i32(self, _: i32) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_i64(self, _: i64) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u8(self, _: u8) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u16(self, _: u16) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u32(self, _: u32) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_u64(self, _: u64) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_f32(self, _: f32) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_f64(self, _: f64) -> Result<(), M::Error> {
        Err(not_flat("a number"))
    }
    fn serialize_char(self, _: char) -> Result<(), M::Error> {
        Err(not_flat("a char"))
    }
    fn serialize_str(self, _: &str) -> Result<(), M::Error> {
        Err(not_flat("a string"))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), M::Error> {
        Err(not_flat("bytes"))
    }
    fn serialize_none(self) -> Result<(), M::Error> {
        Err(not_flat("none"))
    }
    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), M::Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), M::Error> {
        Ok(())
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), M::Error> {
        Err(not_flat("an enum"))
    }
    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), M::Error> {
        Err(not_flat("an enum"))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, M::Error> {
        Err(not_flat("a sequence"))
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, M::Error> {
        Err(not_flat("a tuple"))
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, M::Error> {
        Err(not_flat("a tuple struct"))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, M::Error> {
        Err(not_flat("an enum"))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<FlatEntries<'a, M>, M::Error> {
        Ok(FlatEntries(self.0))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<FlatEntries<'a, M>, M::Error> {
        Ok(FlatEntries(self.0))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, M::Error> {
        Err(not_flat("an enum"))
    }
}

/// The entries of a struct or map, written into the caller's map.
pub struct FlatEntries<'a, M>(&'a mut M);

impl<M: SerializeMap> ser::SerializeStruct for FlatEntries<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_field<T: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), M::Error> {
        self.0.serialize_entry(key, value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}

impl<M: SerializeMap> SerializeMap for FlatEntries<'_, M> {
    type Ok = ();
    type Error = M::Error;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), M::Error> {
        self.0.serialize_key(key)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), M::Error> {
        self.0.serialize_value(value)
    }

    fn end(self) -> Result<(), M::Error> {
        Ok(())
    }
}
