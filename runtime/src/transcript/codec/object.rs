//! A custom body held as data ([`Held`]) read by its type's `Deserialize`: the
//! object path of the registry (`Deserialize for AgentMessage`, which holds a
//! body until its version is known, and a migration's result).
//!
//! The keys are given to the type as strings and each value through an erased
//! deserializer, so what is compiled for a type is its own visitor over these
//! entries; the decoding of a value is compiled once per field type, shared by
//! every kind with a field of that type, and no deserializer is inlined into a
//! type's code. (A decoder of a `serde_json::Value` per type cost more than the
//! type's line decoder to compile.)

use std::slice;

use serde::de::value::StrDeserializer;
use serde::de::{self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, Visitor};

use super::held::Held;

/// Decodes `T` from an object's held entries.
pub(crate) fn decode_object<T: DeserializeOwned>(
    fields: &[(Held<'_>, Held<'_>)],
) -> serde_json::Result<T> {
    T::deserialize(Object { fields })
}

/// An object's held entries as a deserializer.
struct Object<'a, 'de> {
    fields: &'a [(Held<'de>, Held<'de>)],
}

impl<'de> Deserializer<'de> for Object<'_, 'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> serde_json::Result<V::Value> {
        visitor.visit_map(Fields {
            entries: self.fields.iter(),
            value: None,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

struct Fields<'a, 'de> {
    entries: slice::Iter<'a, (Held<'de>, Held<'de>)>,
    value: Option<&'a Held<'de>>,
}

// Not inlined: a type's visitor calls these (the key's per type, the value's
// per field type, shared), and keeps only the calls.
impl<'de> MapAccess<'de> for Fields<'_, 'de> {
    type Error = serde_json::Error;

    #[inline(never)]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> serde_json::Result<Option<K::Value>> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        // One key deserializer for every type: registered types are
        // `DeserializeOwned`, so none borrows a key.
        let key = match key {
            Held::Str(key) => std::borrow::Cow::Borrowed(*key),
            Held::String(key) => std::borrow::Cow::Borrowed(key.as_str()),
            other => std::borrow::Cow::Owned(key_text(other)?),
        };
        seed.deserialize(StrDeserializer::new(&key)).map(Some)
    }

    #[inline(never)]
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> serde_json::Result<V::Value> {
        let Some(value) = self.value.take() else {
            return Err(de::Error::custom("a value was read before its key"));
        };
        let mut erased = <dyn erased_serde::Deserializer>::erase(value.lend::<serde_json::Error>());
        seed.deserialize(&mut erased as &mut dyn erased_serde::Deserializer<'de>)
            .map_err(de::Error::custom)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A key that is not a string, as serde_json writes such keys: a number, a
/// bool or a char as its text.
#[cold]
fn key_text(key: &Held<'_>) -> serde_json::Result<String> {
    match key {
        Held::U64(n) => Ok(n.to_string()),
        Held::I64(n) => Ok(n.to_string()),
        Held::Bool(b) => Ok(b.to_string()),
        Held::Char(c) => Ok(c.to_string()),
        _ => Err(de::Error::custom("key must be a string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Body {
        name: String,
        count: u32,
        ratio: f64,
        tags: Vec<String>,
        note: Option<String>,
        #[serde(default)]
        missing: bool,
        nested: serde_json::Value,
        kind: Kind,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    enum Kind {
        Plain,
        Tagged { x: u8 },
    }

    #[test]
    fn reads_as_the_line_reads() {
        for text in [
            r#"{"name":"a\"b","count":7,"ratio":0.30000000000000004,"tags":["x"],"note":null,"nested":{"k":[1,-2,true]},"kind":"plain"}"#,
            r#"{"kind":{"tagged":{"x":3}},"note":"n","tags":[],"ratio":5e-324,"count":0,"name":"","nested":null,"extra":1}"#,
        ] {
            let direct: Body = serde_json::from_str(text).unwrap();
            let Held::Map(fields) = serde_json::from_str::<Held>(text).unwrap() else {
                panic!("an object")
            };
            assert_eq!(decode_object::<Body>(&fields).unwrap(), direct);
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let read = |text: &str| {
            let Held::Map(fields) = serde_json::from_str::<Held>(text).unwrap() else {
                panic!("an object")
            };
            decode_object::<Body>(&fields).unwrap_err().to_string()
        };
        assert_eq!(read(r#"{"name":"a"}"#), "missing field `count`");
        assert_eq!(
            read(r#"{"name":5}"#),
            "invalid type: integer `5`, expected a string"
        );
        assert_eq!(read(r#"{"name":"a","name":"b"}"#), "duplicate field `name`");
    }
}
