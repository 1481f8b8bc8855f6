//! Fields of another agent's log read as loosely as its writer writes them:
//! a field of the wrong JSON type is read as absent, never an error that
//! would refuse the whole entry (`#[serde(deserialize_with = …)]` helpers for
//! the typed entries of [`claude`](super::claude) and [`codex`](super::codex)).

use std::fmt;

use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;

/// A JSON value as far as a loose field reads it: a string, a boolean, an
/// unsigned integer, or anything else (read through, never kept).
enum Scalar {
    Str(String),
    Bool(bool),
    // Read by `count`, Codex's alone.
    #[cfg_attr(not(feature = "openai-responses"), allow(dead_code))]
    Count(u64),
    Other,
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ScalarVisitor;
        impl<'de> Visitor<'de> for ScalarVisitor {
            type Value = Scalar;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Scalar, E> {
                Ok(Scalar::Str(s.to_owned()))
            }
            fn visit_string<E: de::Error>(self, s: String) -> Result<Scalar, E> {
                Ok(Scalar::Str(s))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<Scalar, E> {
                Ok(Scalar::Bool(b))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<Scalar, E> {
                Ok(Scalar::Count(n))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<Scalar, E> {
                Ok(u64::try_from(n).map_or(Scalar::Other, Scalar::Count))
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_none<E: de::Error>(self) -> Result<Scalar, E> {
                Ok(Scalar::Other)
            }
            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Scalar, D::Error> {
                d.deserialize_any(self)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Scalar, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Scalar, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Scalar::Other)
            }
        }
        deserializer.deserialize_any(ScalarVisitor)
    }
}

/// A string field: `None` when it is anything else.
pub(super) fn string<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Str(s) => Some(s),
        _ => None,
    })
}

/// A flag: true only when it is `true`.
#[cfg(feature = "anthropic")]
pub(super) fn flag<'de, D: Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    Ok(matches!(Scalar::deserialize(d)?, Scalar::Bool(true)))
}

/// A boolean field: `None` when it is anything else.
#[cfg(feature = "openai-responses")]
pub(super) fn boolean<'de, D: Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Bool(b) => Some(b),
        _ => None,
    })
}

/// A count (an unsigned integer): `None` when it is anything else.
#[cfg(feature = "openai-responses")]
pub(super) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    Ok(match Scalar::deserialize(d)? {
        Scalar::Count(n) => Some(n),
        _ => None,
    })
}

/// A field that is there, whatever its value (`null` too): `Some`.
#[cfg(feature = "anthropic")]
pub(super) fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A value of type `T` read from a JSON text, `None` when the text is not
/// one (a field of the wrong shape, read as absent).
pub(super) fn parse<'a, T: Deserialize<'a>>(text: &'a str) -> Option<T> {
    serde_json::from_str(text).ok()
}

/// The keys of the JSON object `text`, in the order written (none for
/// anything else).
#[cfg(feature = "openai-responses")]
pub(super) fn keys(text: &str) -> Vec<String> {
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some((key, IgnoredAny)) = map.next_entry::<String, IgnoredAny>()? {
                keys.push(key);
            }
            Ok(keys)
        }
    }
    if !text.trim_start().starts_with('{') {
        return Vec::new();
    }
    serde_json::Deserializer::from_str(text)
        .deserialize_map(Keys)
        .unwrap_or_default()
}

/// The JSON type a field of a log is written with, for [`wrong_types`].
// Codex's table (openai-responses alone) uses only some of the kinds.
#[cfg_attr(not(feature = "anthropic"), allow(dead_code))]
pub(super) enum Kind {
    /// A string.
    Str,
    /// `true` or `false`.
    Bool,
    /// A number.
    Num,
    /// An object with these fields.
    Obj(&'static [Field]),
    /// An array of these.
    Arr(&'static Kind),
    /// A string, or an array of these (a message's content).
    StrOrArr(&'static Kind),
    /// Anything (a field whose type is not checked, such as a tool's input).
    Any,
}

/// A field and its kind.
pub(super) type Field = (&'static str, Kind);

/// The fields of the JSON object `text` of another JSON type than `fields`
/// says (`null` reads as absent, so it is never wrong), each said with its
/// path (`message.content[1].source.data`) and what was found: the typed
/// reads of the importers take such a value as absent (or keep its JSON as
/// text), which is then said, never done in silence.
pub(super) fn wrong_types(text: &str, fields: &'static [Field]) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
        check(&value, &Kind::Obj(fields), &mut String::new(), &mut found);
    }
    found
}

fn check(value: &serde_json::Value, kind: &Kind, path: &mut String, found: &mut Vec<String>) {
    use serde_json::Value;
    let name = |v: &Value| match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let want = match (kind, value) {
        (_, Value::Null) | (Kind::Any, _) => return,
        (Kind::Str, Value::String(_))
        | (Kind::Bool, Value::Bool(_))
        | (Kind::Num, Value::Number(_))
        | (Kind::StrOrArr(_), Value::String(_)) => return,
        (Kind::Obj(fields), Value::Object(map)) => {
            for (key, kind) in *fields {
                if let Some(v) = map.get(*key) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                    check(v, kind, path, found);
                    path.truncate(len);
                }
            }
            return;
        }
        (Kind::Arr(of) | Kind::StrOrArr(of), Value::Array(items)) => {
            for (i, v) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                check(v, of, path, found);
                path.truncate(len);
            }
            return;
        }
        (Kind::Str, _) => "a string",
        (Kind::Bool, _) => "a boolean",
        (Kind::Num, _) => "a number",
        (Kind::Obj(_), _) => "an object",
        (Kind::Arr(_), _) => "an array",
        (Kind::StrOrArr(_), _) => "a string or an array",
    };
    found.push(format!(
        "`{path}` is {} where {want} belongs, so it is not read as one",
        name(value)
    ));
}
