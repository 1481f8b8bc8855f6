//! A custom body as its type's `Deserialize` reads it: the one deserializer,
//! [`Body`], a registered type is decoded from, whether the body is a line's
//! map (the transcript reader's path) or an object held as data ([`Held`]: the
//! generic `Deserialize for AgentMessage`, which holds a body until its version
//! is known, and a migration's result).
//!
//! The keys are given to the type as strings and each value through
//! [`value`]'s object-safe calls. So what is compiled for a type
//! is its own visitor, once, over [`Body`]'s map; the decoding of a value is
//! compiled once per field type, and for the common field types once for all
//! crates, here ([`SHARED`]). No deserializer is inlined into a type's code.
//! (Instantiating a type's visitor for two deserializers costs twice, however
//! simple the second; erasing the visitor itself, as typetag does, costs more:
//! a vtable of every `visit_` method for the type's visitor and its field
//! visitor.)

use std::marker::PhantomData;
use std::slice;

use serde::de::value::StrDeserializer;
use serde::de::{
    self, DeserializeOwned, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor,
};

use super::held::Held;
use super::value::{self, Give, Live, Read};
use crate::json::key::Key;

/// Reads one value from a [`Source`](super::value::Source).
pub(crate) type ReadValue<'r, 'de> = Read<'r, 'de>;

/// The entries of a line's map as a [`Body`] reads them (the line reader's
/// map, less its role and envelope keys).
pub(crate) trait LineFields<'de> {
    /// The next key of the type's own, or `None` at the map's end.
    fn next_key(&mut self) -> serde_json::Result<Option<Key<'de>>>;
    /// Gives the next value to `read`.
    fn next_value(&mut self, read: ReadValue<'_, 'de>) -> serde_json::Result<()>;
}

/// The one deserializer of a registered type. See the module documentation.
pub(crate) struct Body<'a, 'de> {
    entries: Entries<'a, 'de>,
}

impl<'a, 'de> Body<'a, 'de> {
    /// A line's map.
    pub(crate) fn line(fields: &'a mut dyn LineFields<'de>) -> Self {
        Self {
            entries: Entries::Line(fields),
        }
    }

    /// An object's held entries.
    pub(crate) fn held(fields: &'a [(Held<'de>, Held<'de>)]) -> Self {
        Self {
            entries: Entries::Held {
                entries: fields.iter(),
                value: None,
            },
        }
    }

    /// Decodes `T` from the body.
    pub(crate) fn decode<T: DeserializeOwned>(self) -> serde_json::Result<T> {
        T::deserialize(self)
    }
}

enum Entries<'a, 'de> {
    Line(&'a mut dyn LineFields<'de>),
    Held {
        entries: slice::Iter<'a, (Held<'de>, Held<'de>)>,
        value: Option<&'a Held<'de>>,
    },
}

impl<'de> Deserializer<'de> for Body<'_, 'de> {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> serde_json::Result<V::Value> {
        visitor.visit_map(self.entries)
    }

    /// A body of one entry is an externally tagged variant (a hand-written
    /// `CustomMessage` may be an enum), as serde_json reads one: the first
    /// entry is the variant, and a body with another entry after it is
    /// refused (a line's envelope keys after it are taken, as ever).
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> serde_json::Result<V::Value> {
        let mut entries = self.entries;
        let value = visitor.visit_enum(BodyVariant(&mut entries))?;
        match entries.next_key()? {
            None => Ok(value),
            Some(_) => Err(de::Error::invalid_type(
                de::Unexpected::Map,
                &"a map of one entry, the variant",
            )),
        }
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

/// A body's first entry as an enum's variant: its key names the variant,
/// its value is the content, read as serde_json reads a variant's (a struct
/// variant from an object or an array).
struct BodyVariant<'e, 'a, 'de>(&'e mut Entries<'a, 'de>);

impl<'de> de::EnumAccess<'de> for BodyVariant<'_, '_, 'de> {
    type Error = serde_json::Error;
    type Variant = Self;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> serde_json::Result<(S::Value, Self)> {
        let variant = match self.0.next_key()? {
            Some(key) => seed.deserialize(StrDeserializer::new(key.as_str()))?,
            None => return Err(de::Error::invalid_type(de::Unexpected::Map, &"enum")),
        };
        Ok((variant, self))
    }
}

impl<'de> de::VariantAccess<'de> for BodyVariant<'_, '_, 'de> {
    type Error = serde_json::Error;

    fn unit_variant(self) -> serde_json::Result<()> {
        self.0.next_value_seed(PhantomData::<()>)
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> serde_json::Result<S::Value> {
        self.0.next_value_seed(seed)
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> serde_json::Result<V::Value> {
        self.0.next_value_seed(Content::Tuple(len, visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> serde_json::Result<V::Value> {
        self.0.next_value_seed(Content::Struct(fields, visitor))
    }
}

/// A tuple or struct variant's content, read with its visitor.
enum Content<V> {
    Tuple(usize, V),
    Struct(&'static [&'static str], V),
}

impl<'de, V: Visitor<'de>> DeserializeSeed<'de> for Content<V> {
    type Value = V::Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<V::Value, D::Error> {
        match self {
            Content::Tuple(len, visitor) => deserializer.deserialize_tuple(len, visitor),
            Content::Struct(fields, visitor) => {
                deserializer.deserialize_struct("", fields, visitor)
            }
        }
    }
}

/// The work of [`Entries`]' map access, in functions that are not generic: a
/// type's visitor (compiled in the type's crate, and in each crate again when
/// optimized, as generic code is not shared then) keeps only the calls.
impl<'de> Entries<'_, 'de> {
    /// The next key of the type's own, or `None` at the map's end.
    #[inline(never)]
    fn next_key(&mut self) -> serde_json::Result<Option<Key<'_>>> {
        match self {
            Entries::Line(fields) => fields.next_key(),
            Entries::Held { entries, value } => {
                let Some((key, held)) = entries.next() else {
                    return Ok(None);
                };
                *value = Some(held);
                // A held key that is not text (another format's) reads as a
                // struct's key does: one rule, `value::key_text`.
                Ok(Some(match key {
                    Held::Str(key) => Key::Borrowed(key),
                    Held::String(key) => Key::Borrowed(key.as_str()),
                    other => value::key_text(&mut Give(Some(other.lend::<serde_json::Error>())))?,
                }))
            }
        }
    }

    /// Gives the value of the last key to `read`.
    #[inline(never)]
    fn next_value(&mut self, read: ReadValue<'_, 'de>) -> serde_json::Result<()> {
        match self {
            Entries::Line(fields) => fields.next_value(read),
            Entries::Held { value, .. } => {
                let Some(held) = value.take() else {
                    return Err(de::Error::custom("a value was read before its key"));
                };
                read(&mut Give(Some(held.lend::<serde_json::Error>())))
            }
        }
    }
}

impl<'de> MapAccess<'de> for Entries<'_, 'de> {
    type Error = serde_json::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> serde_json::Result<Option<K::Value>> {
        // One key deserializer for every type: registered types are
        // `DeserializeOwned`, so none borrows a key.
        match self.next_key()? {
            Some(key) => seed
                .deserialize(StrDeserializer::new(key.as_str()))
                .map(Some),
            None => Ok(None),
        }
    }

    // Not inlined, so that the instances compiled here (`SHARED`) are used by
    // every crate, optimized or not, instead of compiled there again.
    #[inline(never)]
    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> serde_json::Result<V::Value> {
        let mut seed = Some(seed);
        let mut out = None;
        self.next_value(&mut |source| {
            if let Some(seed) = seed.take() {
                out = Some(seed.deserialize(Live(source))?);
            }
            Ok(())
        })?;
        out.ok_or_else(|| de::Error::custom("a value was not read"))
    }

    fn size_hint(&self) -> Option<usize> {
        match self {
            Entries::Line(_) => None,
            Entries::Held { entries, .. } => Some(entries.len()),
        }
    }
}

/// A field type's reader, compiled here (see [`SHARED`]).
struct Shared(#[allow(dead_code)] *const ());

// Only addresses of functions, never called through.
unsafe impl Sync for Shared {}

macro_rules! shared {
    ($($ty:ty,)*) => {
        /// The readers of the field types most kinds have, compiled here once.
        /// A generic function that is never inlined is compiled once for all
        /// crates when an upstream crate has compiled it for the same types
        /// (rustc shares such instances even in optimized builds), so a kind
        /// with fields of these types compiles none of their decoding: only
        /// its own visitor, which calls these.
        #[used]
        static SHARED: &[Shared] = &[$(
            Shared(<Entries<'static, 'static> as MapAccess<'static>>::next_value_seed::<PhantomData<$ty>> as *const ()),
            Shared(<value::LiveItems<'static, 'static> as MapAccess<'static>>::next_value_seed::<PhantomData<$ty>> as *const ()),
            Shared(<value::LiveFields<'static, 'static> as MapAccess<'static>>::next_value_seed::<PhantomData<$ty>> as *const ()),
            Shared(<&$ty as erased_serde::Serialize>::erased_serialize as *const ()),
            Shared(<value::LiveItems<'static, 'static> as SeqAccess<'static>>::next_element_seed::<PhantomData<$ty>> as *const ()),
        )*
            // What a struct's visitor reads an unknown field's value as.
            Shared(<Entries<'static, 'static> as MapAccess<'static>>::next_value_seed::<PhantomData<de::IgnoredAny>> as *const ()),
            Shared(<value::LiveFields<'static, 'static> as MapAccess<'static>>::next_value_seed::<PhantomData<de::IgnoredAny>> as *const ()),
        ];
    };
}

shared! {
    String, bool, u64, i64, u32, i32, u16, u8, usize, f64, f32,
    Option<String>, Option<bool>, Option<u64>, Option<i64>, Option<u32>, Option<f64>,
    Vec<String>, Vec<u64>, Option<Vec<String>>,
    serde_json::Value, Option<serde_json::Value>, Vec<serde_json::Value>,
    serde_json::Map<String, serde_json::Value>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Shape {
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
            let direct: Shape = serde_json::from_str(text).unwrap();
            let Held::Map(fields) = serde_json::from_str::<Held>(text).unwrap() else {
                panic!("an object")
            };
            assert_eq!(Body::held(&fields).decode::<Shape>().unwrap(), direct);
        }
    }

    #[test]
    fn errors_name_the_problem() {
        let read = |text: &str| {
            let Held::Map(fields) = serde_json::from_str::<Held>(text).unwrap() else {
                panic!("an object")
            };
            Body::held(&fields)
                .decode::<Shape>()
                .unwrap_err()
                .to_string()
        };
        assert_eq!(read(r#"{"name":"a"}"#), "missing field `count`");
        assert_eq!(
            read(r#"{"name":5}"#),
            "invalid type: integer `5`, expected a string"
        );
        assert_eq!(read(r#"{"name":"a","name":"b"}"#), "duplicate field `name`");
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Outer {
        inner: Inner,
        #[serde(default)]
        pair: Option<(u8, String)>,
        #[serde(default)]
        choice: Option<Choice>,
        #[serde(default)]
        unit: Option<()>,
        #[serde(default)]
        wrapped: Option<Wrapped>,
        #[serde(default)]
        letter: Option<char>,
        #[serde(default)]
        wide: Option<i128>,
        #[serde(default)]
        map: std::collections::BTreeMap<String, bool>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Inner {
        id: String,
        #[serde(default)]
        size: u64,
        #[serde(default)]
        tags: Vec<String>,
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    enum Choice {
        Plain,
        Tuple(u8, u8),
        Named { x: i32 },
    }

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct Wrapped(f64);

    /// What each hint's visitor is given (only the events serde_json gives
    /// for it) decodes a held object as serde_json decodes the text, and fails
    /// with the same words where serde_json fails.
    #[test]
    fn a_held_body_reads_as_serde_json_reads() {
        let cases = [
            r#"{"inner":{"id":"a","size":3,"tags":["x","y"],"extra":[1,{"k":null}]}}"#,
            r#"{"inner":["b",4,["z"]]}"#,
            r#"{"inner":{"id":"c"},"pair":[7,"seven"],"choice":"Plain","unit":null}"#,
            r#"{"inner":{"id":"d"},"choice":{"Tuple":[1,2]},"wrapped":2.5,"letter":"q"}"#,
            r#"{"inner":{"id":"e"},"choice":{"Named":{"x":-4}},"wide":-9223372036854775808}"#,
            r#"{"inner":{"id":"f"},"map":{"b":true,"a":false}}"#,
            // Each of these fails, and must fail alike.
            r#"{"inner":"not a struct"}"#,
            r#"{"inner":7}"#,
            r#"{"inner":{"id":5}}"#,
            r#"{"inner":{"id":"g","size":-1}}"#,
            r#"{"inner":{"id":"h","tags":"x"}}"#,
            r#"{"inner":{"id":"i"},"pair":{"a":1}}"#,
            r#"{"inner":{"id":"k"},"choice":{"Nope":1}}"#,
            r#"{"inner":{"id":"l"},"unit":false}"#,
            r#"{"inner":{"id":"m"},"wrapped":"w"}"#,
            r#"{"inner":{"id":"n"},"letter":"two"}"#,
            r#"{"inner":{"id":"o"},"map":{"x":1}}"#,
            r#"{"inner":{"id":"p"},"map":[]}"#,
            r#"{"inner":{"size":1}}"#,
        ];
        for text in cases {
            let direct = serde_json::from_str::<Outer>(text).map_err(|e| {
                let text = e.to_string();
                text.split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            });
            let Held::Map(fields) = serde_json::from_str::<Held>(text).unwrap() else {
                panic!("an object")
            };
            let held = Body::held(&fields)
                .decode::<Outer>()
                .map_err(|e| e.to_string());
            assert_eq!(held, direct, "{text}");
        }
    }

    /// A value held from a format other than JSON can hold what JSON cannot
    /// (bytes, a char, a number as a key); each still reads where a string's
    /// visitor would take it.
    #[test]
    fn values_only_another_format_holds_still_read() {
        let inner = Held::Map(vec![
            (Held::Str("id"), Held::Bytes(b"from bytes")),
            (Held::Str("size"), Held::U64(3)),
            (
                Held::Str("tags"),
                Held::Seq(vec![Held::Char('c'), Held::ByteBuf(b"buf".to_vec())]),
            ),
            (Held::U64(9), Held::Unit),
        ]);
        let fields = vec![
            (Held::Str("inner"), inner),
            // A body's keys read as a nested struct's: bytes as their text,
            // a number as its digits (an unknown field here).
            (
                Held::Bytes(b"letter"),
                Held::Some(Box::new(Held::Char('z'))),
            ),
            (Held::U64(7), Held::Unit),
            (Held::Str("unit"), Held::None),
        ];
        let outer = Body::held(&fields).decode::<Outer>().unwrap();
        assert_eq!(
            outer.inner,
            Inner {
                id: "from bytes".to_owned(),
                size: 3,
                tags: vec!["c".to_owned(), "buf".to_owned()],
            }
        );
        assert_eq!(outer.letter, Some('z'));
        assert_eq!(outer.unit, None);
        let bad = vec![(
            Held::Str("inner"),
            Held::Map(vec![(Held::Str("id"), Held::Bytes(&[0xff, 0xfe]))]),
        )];
        assert_eq!(
            Body::held(&bad).decode::<Outer>().unwrap_err().to_string(),
            "invalid value: byte array, expected a string"
        );
    }

    #[test]
    fn an_enum_body_is_one_tagged_entry() {
        #[derive(Debug, PartialEq, serde::Deserialize)]
        enum Choice {
            Left { n: u8 },
            Right(String),
        }
        let Held::Map(fields) = serde_json::from_str::<Held>(r#"{"Left":{"n":2}}"#).unwrap() else {
            panic!("an object")
        };
        assert_eq!(
            Body::held(&fields).decode::<Choice>().unwrap(),
            Choice::Left { n: 2 }
        );
        let Held::Map(fields) = serde_json::from_str::<Held>(r#"{"Right":"r"}"#).unwrap() else {
            panic!("an object")
        };
        assert_eq!(
            Body::held(&fields).decode::<Choice>().unwrap(),
            Choice::Right("r".to_owned())
        );
        // A second entry is refused, as serde_json refuses it, not dropped.
        let text = r#"{"Right":"r","Left":{"n":2}}"#;
        assert!(serde_json::from_str::<Choice>(text).is_err());
        let Held::Map(fields) = serde_json::from_str::<Held>(text).unwrap() else {
            panic!("an object")
        };
        assert_eq!(
            Body::held(&fields)
                .decode::<Choice>()
                .unwrap_err()
                .to_string(),
            "invalid type: map, expected a map of one entry, the variant"
        );
    }
}
