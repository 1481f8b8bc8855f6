//! A value held back while a line's role is still unknown, and replayed once it
//! is: the generic serde path meets the keys before `"role"` (a writer that puts
//! the role last) before it knows which type reads them.
//!
//! It is what serde's own internally tagged enums buffer (its private
//! `Content`): the data model's values in a tree of vectors, strings borrowed
//! from the input where the deserializer lends them. That costs far less than a
//! `serde_json::Value`, whose objects are maps of owned keys.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::{
    BorrowedStrDeserializer, MapAccessDeserializer, MapDeserializer, SeqDeserializer,
    StringDeserializer,
};
use serde::de::{self, Deserialize, Deserializer, IntoDeserializer, MapAccess, SeqAccess, Visitor};

/// One value of the serde data model, held.
#[derive(Debug, Clone)]
pub(crate) enum Held<'de> {
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Char(char),
    Str(&'de str),
    String(String),
    Bytes(&'de [u8]),
    ByteBuf(Vec<u8>),
    Unit,
    None,
    Some(Box<Held<'de>>),
    Seq(Vec<Held<'de>>),
    Map(Vec<(Held<'de>, Held<'de>)>),
}

impl<'de> Deserialize<'de> for Held<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(HeldVisitor)
    }
}

struct HeldVisitor;

impl<'de> Visitor<'de> for HeldVisitor {
    type Value = Held<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Held<'de>, E> {
        Ok(Held::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Held<'de>, E> {
        Ok(Held::I64(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Held<'de>, E> {
        Ok(Held::U64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Held<'de>, E> {
        Ok(Held::F64(v))
    }
    fn visit_char<E>(self, v: char) -> Result<Held<'de>, E> {
        Ok(Held::Char(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Held<'de>, E> {
        Ok(Held::Str(v))
    }
    fn visit_str<E>(self, v: &str) -> Result<Held<'de>, E> {
        Ok(Held::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Held<'de>, E> {
        Ok(Held::String(v))
    }
    fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<Held<'de>, E> {
        Ok(Held::Bytes(v))
    }
    fn visit_bytes<E>(self, v: &[u8]) -> Result<Held<'de>, E> {
        Ok(Held::ByteBuf(v.to_vec()))
    }
    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Held<'de>, E> {
        Ok(Held::ByteBuf(v))
    }
    fn visit_unit<E>(self) -> Result<Held<'de>, E> {
        Ok(Held::Unit)
    }
    fn visit_none<E>(self) -> Result<Held<'de>, E> {
        Ok(Held::None)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Held<'de>, D::Error> {
        Held::deserialize(d).map(|v| Held::Some(Box::new(v)))
    }
    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<Held<'de>, D::Error> {
        Held::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Held<'de>, A::Error> {
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(value) = seq.next_element()? {
            out.push(value);
        }
        Ok(Held::Seq(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Held<'de>, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(entry) = map.next_entry()? {
            out.push(entry);
        }
        Ok(Held::Map(out))
    }
}

/// A held value replayed to a type's `Deserialize`, failing with `E` (the error
/// of the deserializer it was read from).
pub(crate) struct Replay<'de, E> {
    held: Held<'de>,
    error: PhantomData<E>,
}

impl<'de> Held<'de> {
    /// The held value as a deserializer that fails with `E`.
    pub(crate) fn replay<E>(self) -> Replay<'de, E> {
        Replay {
            held: self,
            error: PhantomData,
        }
    }
}

impl<'de, E: de::Error> IntoDeserializer<'de, E> for Held<'de> {
    type Deserializer = Replay<'de, E>;

    fn into_deserializer(self) -> Replay<'de, E> {
        self.replay()
    }
}

/// `deserialize_newtype_struct` for a deserializer whose newtype is its
/// value (the same in [`Replay`] and [`Lend`]).
macro_rules! newtype_struct_is_its_value {
    () => {
        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            visitor: V,
        ) -> Result<V::Value, E> {
            visitor.visit_newtype_struct(self)
        }
    };
}

/// `deserialize_f32`: a number too large for an `f32` is an error, as
/// serde_json gives reading the text ("number out of range"), rather than the
/// infinity serde's own `f32` visitor makes of it.
macro_rules! f32_in_range {
    () => {
        fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
            if let Held::F64(v) = &self.held {
                if v.is_finite() && (*v as f32).is_infinite() {
                    return Err(de::Error::custom("number out of range"));
                }
            }
            self.deserialize_any(visitor)
        }
    };
}

/// An enum read from a map: its variant, once the map's first entry was read
/// as it; a map with more entries is refused there, as serde_json refuses it
/// (it reads the variant's key and value, then wants the object's end).
fn one_variant<T, E: de::Error>(end: Result<(), E>, value: T) -> Result<T, E> {
    match end {
        Ok(()) => Ok(value),
        Err(_) => Err(de::Error::invalid_type(
            de::Unexpected::Map,
            &"a map of one entry, the variant",
        )),
    }
}

impl<'de, E: de::Error> Deserializer<'de> for Replay<'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Bool(v) => visitor.visit_bool(v),
            Held::U64(v) => visitor.visit_u64(v),
            Held::I64(v) => visitor.visit_i64(v),
            Held::F64(v) => visitor.visit_f64(v),
            Held::Char(v) => visitor.visit_char(v),
            Held::Str(v) => visitor.visit_borrowed_str(v),
            Held::String(v) => visitor.visit_string(v),
            Held::Bytes(v) => visitor.visit_borrowed_bytes(v),
            Held::ByteBuf(v) => visitor.visit_byte_buf(v),
            Held::Unit => visitor.visit_unit(),
            Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.replay()),
            // Every element must be read, as serde_json requires of an array
            // (a tuple of 2 is no array of 3): `end` says what is left over.
            Held::Seq(v) => {
                let mut seq = SeqDeserializer::new(v.into_iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end().map(|()| value)
            }
            Held::Map(v) => {
                let mut map = MapDeserializer::new(v.into_iter());
                let value = visitor.visit_map(&mut map)?;
                map.end().map(|()| value)
            }
        }
    }

    /// `null` (held as unit or none) is `None`; anything else is `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Unit | Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.replay()),
            other => visitor.visit_some(other.replay()),
        }
    }

    newtype_struct_is_its_value!();
    f32_in_range!();

    /// A string is a unit variant; a one-entry map an externally tagged one.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.held {
            Held::Str(v) => visitor.visit_enum(BorrowedStrDeserializer::new(v)),
            Held::String(v) => visitor.visit_enum(StringDeserializer::new(v)),
            Held::Map(v) => {
                let mut map = MapDeserializer::new(v.into_iter());
                let value = visitor.visit_enum(MapAccessDeserializer::new(&mut map))?;
                one_variant(map.end(), value)
            }
            other => other.replay::<E>().deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// A held value lent to a type's `Deserialize`, failing with `E`: the value
/// stays held, so it can be read again (a custom body that did not decode is
/// kept, re-encoded, or migrated).
pub(crate) struct Lend<'a, 'de, E> {
    held: &'a Held<'de>,
    error: PhantomData<E>,
}

impl<'de> Held<'de> {
    /// The held value as a deserializer that reads it in place and fails with `E`.
    pub(crate) fn lend<E>(&self) -> Lend<'_, 'de, E> {
        Lend {
            held: self,
            error: PhantomData,
        }
    }
}

impl<'a, 'de, E: de::Error> IntoDeserializer<'de, E> for &'a Held<'de> {
    type Deserializer = Lend<'a, 'de, E>;

    fn into_deserializer(self) -> Lend<'a, 'de, E> {
        self.lend()
    }
}

impl<'de, E: de::Error> Deserializer<'de> for Lend<'_, 'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Bool(v) => visitor.visit_bool(*v),
            Held::U64(v) => visitor.visit_u64(*v),
            Held::I64(v) => visitor.visit_i64(*v),
            Held::F64(v) => visitor.visit_f64(*v),
            Held::Char(v) => visitor.visit_char(*v),
            Held::Str(v) => visitor.visit_borrowed_str(v),
            Held::String(v) => visitor.visit_str(v),
            Held::Bytes(v) => visitor.visit_borrowed_bytes(v),
            Held::ByteBuf(v) => visitor.visit_bytes(v),
            Held::Unit => visitor.visit_unit(),
            Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.lend()),
            // Every element must be read, as in `Replay`.
            Held::Seq(v) => {
                let mut seq = SeqDeserializer::new(v.iter());
                let value = visitor.visit_seq(&mut seq)?;
                seq.end().map(|()| value)
            }
            Held::Map(v) => {
                let mut map = MapDeserializer::new(v.iter().map(|(k, v)| (k, v)));
                let value = visitor.visit_map(&mut map)?;
                map.end().map(|()| value)
            }
        }
    }

    /// `null` (held as unit or none) is `None`; anything else is `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Unit | Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.lend()),
            _ => visitor.visit_some(self),
        }
    }

    newtype_struct_is_its_value!();
    f32_in_range!();

    /// A string is a unit variant; a one-entry map an externally tagged one.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.held {
            Held::Str(v) => visitor.visit_enum(BorrowedStrDeserializer::new(v)),
            Held::String(v) => visitor.visit_enum(de::value::StrDeserializer::new(v)),
            Held::Map(v) => {
                let mut map = MapDeserializer::new(v.iter().map(|(k, v)| (k, v)));
                let value = visitor.visit_enum(MapAccessDeserializer::new(&mut map))?;
                one_variant(map.end(), value)
            }
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whatever a held value replays to equals what the input decodes to
    /// directly, for the shapes transcript types use.
    #[test]
    fn replays_as_the_input_reads() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        enum Kind {
            Plain,
            Tagged { x: u8 },
        }
        #[derive(Debug, PartialEq, serde::Deserialize)]
        struct Shape<'a> {
            n: Option<i64>,
            m: Option<u8>,
            f: f64,
            #[serde(borrow)]
            s: std::borrow::Cow<'a, str>,
            list: Vec<Kind>,
            nested: serde_json::Value,
            id: Option<crate::MessageId>,
        }
        let text = r#"{"n":null,"m":7,"f":1.5,"s":"a\"b","list":["plain",{"tagged":{"x":3}}],"nested":{"k":[1,-2,true,null,"v"]},"id":"m1"}"#;
        let direct: Shape = serde_json::from_str(text).unwrap();
        let held: Held = serde_json::from_str(text).unwrap();
        let replayed = Shape::deserialize(held.clone().replay::<serde_json::Error>()).unwrap();
        assert_eq!(replayed, direct);
        let lent = Shape::deserialize(held.lend::<serde_json::Error>()).unwrap();
        assert_eq!(lent, direct);
        let borrowed: Held = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(borrowed, Held::Str("plain")));
    }
}
