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
use serde::de::{
    self, Deserialize, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, SeqAccess,
    Visitor,
};

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
    /// A whole value as its JSON text, borrowed from a serde_json input
    /// ([`HoldRaw`]): skipped over, not parsed, until it is read.
    Raw(&'de str),
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

/// The name under which serde_json hands over a value's raw text (the token of
/// its `RawValue`, which it keeps private). A deserializer that does not know
/// it reads the request as any newtype struct, and the value is held as data:
/// slower, never wrong.
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Holds one value: as its raw text ([`Held::Raw`]) when the input is
/// serde_json's and lends its text, otherwise as data. Skipping a value costs
/// less than taking it apart, and the text is what a custom body is read from
/// again (`Registration::decode_fields`).
pub(crate) struct HoldRaw;

impl<'de> DeserializeSeed<'de> for HoldRaw {
    type Value = Held<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Held<'de>, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_TOKEN, RawVisitor)
    }
}

struct RawVisitor;

/// A map key, or serde_json's raw-value token, told apart without a copy.
enum RawKey<'de> {
    Token,
    Key(Held<'de>),
}

impl<'de> Deserialize<'de> for RawKey<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawKey<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<RawKey<'de>, E> {
                Ok(if v == RAW_TOKEN {
                    RawKey::Token
                } else {
                    RawKey::Key(Held::Str(v))
                })
            }
            fn visit_str<E>(self, v: &str) -> Result<RawKey<'de>, E> {
                Ok(if v == RAW_TOKEN {
                    RawKey::Token
                } else {
                    RawKey::Key(Held::String(v.to_owned()))
                })
            }
            fn visit_string<E>(self, v: String) -> Result<RawKey<'de>, E> {
                Ok(if v == RAW_TOKEN {
                    RawKey::Token
                } else {
                    RawKey::Key(Held::String(v))
                })
            }
            fn visit_u64<E>(self, v: u64) -> Result<RawKey<'de>, E> {
                Ok(RawKey::Key(Held::U64(v)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<RawKey<'de>, E> {
                Ok(RawKey::Key(Held::I64(v)))
            }
            fn visit_bool<E>(self, v: bool) -> Result<RawKey<'de>, E> {
                Ok(RawKey::Key(Held::Bool(v)))
            }
        }
        deserializer.deserialize_any(V)
    }
}

impl<'de> Visitor<'de> for RawVisitor {
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
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Held<'de>, A::Error> {
        HeldVisitor.visit_seq(seq)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Held<'de>, A::Error> {
        let key = match map.next_key::<RawKey<'de>>()? {
            None => return Ok(Held::Map(Vec::new())),
            Some(RawKey::Token) => {
                return match map.next_value::<Held<'de>>()? {
                    Held::Str(raw) => Ok(Held::Raw(raw)),
                    // The text is not lent (a reader, or a `Value`): read it as data.
                    Held::String(raw) => {
                        let value: serde_json::Value =
                            serde_json::from_str(&raw).map_err(de::Error::custom)?;
                        Held::deserialize(value).map_err(de::Error::custom)
                    }
                    other => Ok(other),
                };
            }
            Some(RawKey::Key(key)) => key,
        };
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64) + 1);
        out.push((key, map.next_value()?));
        while let Some(entry) = map.next_entry()? {
            out.push(entry);
        }
        Ok(Held::Map(out))
    }
}

/// A raw value's text as a deserializer.
fn raw_json(raw: &str) -> serde_json::Deserializer<serde_json::de::StrRead<'_>> {
    serde_json::Deserializer::from_str(raw)
}

/// An error met in a raw value, as the error of the input it was held from;
/// its position, within the value's text alone, is dropped.
#[cold]
fn from_raw<E: de::Error>(error: serde_json::Error) -> E {
    E::custom(without_position(&error))
}

/// A serde_json error's text without the position serde_json adds to it.
pub(crate) fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    let at = format!(" at line {} column {}", error.line(), error.column());
    match text.strip_suffix(&at) {
        Some(message) => message.to_owned(),
        None => text,
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

impl<'de, E: de::Error> Deserializer<'de> for Replay<'de, E> {
    type Error = E;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw).deserialize_any(visitor).map_err(from_raw),
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
            Held::Seq(v) => visitor.visit_seq(SeqDeserializer::new(v.into_iter())),
            Held::Map(v) => visitor.visit_map(MapDeserializer::new(v.into_iter())),
        }
    }

    /// `null` (held as unit or none) is `None`; anything else is `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw).deserialize_option(visitor).map_err(from_raw),
            Held::Unit | Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.replay()),
            other => visitor.visit_some(other.replay()),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw)
                .deserialize_newtype_struct(name, visitor)
                .map_err(from_raw),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    /// A string is a unit variant; a one-entry map an externally tagged one.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw)
                .deserialize_enum(name, variants, visitor)
                .map_err(from_raw),
            Held::Str(v) => visitor.visit_enum(BorrowedStrDeserializer::new(v)),
            Held::String(v) => visitor.visit_enum(StringDeserializer::new(v)),
            Held::Map(v) => visitor.visit_enum(MapAccessDeserializer::new(MapDeserializer::new(
                v.into_iter(),
            ))),
            other => other.replay::<E>().deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map struct
        identifier ignored_any
    }
}

/// A held value written back (a custom body is read by its type's line
/// decoder, from the line it is written as).
impl serde::Serialize for Held<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Held::Bool(v) => serializer.serialize_bool(*v),
            Held::U64(v) => serializer.serialize_u64(*v),
            Held::I64(v) => serializer.serialize_i64(*v),
            Held::F64(v) => serializer.serialize_f64(*v),
            Held::Char(v) => serializer.serialize_char(*v),
            Held::Str(v) => serializer.serialize_str(v),
            Held::String(v) => serializer.serialize_str(v),
            Held::Bytes(v) => serializer.serialize_bytes(v),
            Held::ByteBuf(v) => serializer.serialize_bytes(v),
            Held::Unit | Held::None => serializer.serialize_unit(),
            Held::Some(v) => serializer.serialize_some(v),
            Held::Seq(v) => serializer.collect_seq(v),
            Held::Map(v) => serializer.collect_map(v.iter().map(|(k, v)| (k, v))),
            // Read as data first (a line is written from the text itself).
            Held::Raw(raw) => {
                let value: serde_json::Value =
                    serde_json::from_str(raw).map_err(serde::ser::Error::custom)?;
                serde::Serialize::serialize(&value, serializer)
            }
        }
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
            Held::Raw(raw) => raw_json(raw).deserialize_any(visitor).map_err(from_raw),
            Held::Bool(v) => visitor.visit_bool(*v),
            Held::U64(v) => visitor.visit_u64(*v),
            Held::I64(v) => visitor.visit_i64(*v),
            Held::F64(v) => visitor.visit_f64(*v),
            Held::Char(v) => visitor.visit_char(*v),
            Held::Str(v) => visitor.visit_borrowed_str(*v),
            Held::String(v) => visitor.visit_str(v),
            Held::Bytes(v) => visitor.visit_borrowed_bytes(*v),
            Held::ByteBuf(v) => visitor.visit_bytes(v),
            Held::Unit => visitor.visit_unit(),
            Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.lend()),
            Held::Seq(v) => visitor.visit_seq(SeqDeserializer::new(v.iter())),
            Held::Map(v) => visitor.visit_map(MapDeserializer::new(v.iter().map(|(k, v)| (k, v)))),
        }
    }

    /// `null` (held as unit or none) is `None`; anything else is `Some`.
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw).deserialize_option(visitor).map_err(from_raw),
            Held::Unit | Held::None => visitor.visit_none(),
            Held::Some(v) => visitor.visit_some(v.lend()),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw)
                .deserialize_newtype_struct(name, visitor)
                .map_err(from_raw),
            _ => visitor.visit_newtype_struct(self),
        }
    }

    /// A string is a unit variant; a one-entry map an externally tagged one.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, E> {
        match self.held {
            Held::Raw(raw) => raw_json(raw)
                .deserialize_enum(name, variants, visitor)
                .map_err(from_raw),
            Held::Str(v) => visitor.visit_enum(BorrowedStrDeserializer::new(*v)),
            Held::String(v) => visitor.visit_enum(de::value::StrDeserializer::new(v)),
            Held::Map(v) => visitor.visit_enum(MapAccessDeserializer::new(MapDeserializer::new(
                v.iter().map(|(k, v)| (k, v)),
            ))),
            _ => self.deserialize_any(visitor),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
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
        // Written back, it reads as the input.
        let written = serde_json::to_string(&held).unwrap();
        assert_eq!(serde_json::from_str::<Shape>(&written).unwrap(), direct);
        let borrowed: Held = serde_json::from_str(r#""plain""#).unwrap();
        assert!(matches!(borrowed, Held::Str("plain")));
    }

    /// serde_json's input lends a value's text (the token of its `RawValue`
    /// still works); other inputs give data, which replays the same.
    #[test]
    fn a_json_value_is_held_as_its_text() {
        let text = r#"{"k":[1,"a\"b",{"x":null}],"f":1.5}"#;
        let raw = HoldRaw
            .deserialize(&mut serde_json::Deserializer::from_str(text))
            .unwrap();
        assert!(matches!(raw, Held::Raw(t) if t == text), "{raw:?}");
        let value: serde_json::Value = serde_json::from_str(text).unwrap();
        let data = HoldRaw.deserialize(value.clone()).unwrap();
        assert!(matches!(data, Held::Map(_)), "{data:?}");
        for held in [raw, data] {
            let back = serde_json::Value::deserialize(held.lend::<serde_json::Error>()).unwrap();
            assert_eq!(back, value);
            let back = serde_json::Value::deserialize(held.replay::<serde_json::Error>()).unwrap();
            assert_eq!(back, value);
        }
        // An error inside a raw value names no position within it.
        let bad = HoldRaw
            .deserialize(&mut serde_json::Deserializer::from_str(r#""x""#))
            .unwrap();
        let error = u32::deserialize(bad.replay::<serde_json::Error>()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "invalid type: string \"x\", expected u32"
        );
    }
}
