//! Fields of another agent's log read as loosely as its writer writes them:
//! a field of the wrong JSON type is read as absent, never an error that
//! would refuse the whole entry (`#[serde(deserialize_with = …)]` helpers for
//! the typed entries of [`claude`](super::claude) and [`codex`](super::codex)).

use std::fmt;
use std::fmt::Write as _;

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
/// text), which is then said, never done in silence. The line is walked
/// once, as it is read (no tree of it is built: the fields the table does
/// not name, a tool's output say, are skipped over); each object's findings
/// come in the order of the table.
// Codex's importer reads its lines so; Claude Code's checks field by field
// (`wrong_type`) as it reads the line.
#[cfg_attr(not(feature = "openai-responses"), allow(dead_code))]
pub(super) fn wrong_types(text: &str, fields: &'static [Field]) -> Vec<String> {
    use serde::de::DeserializeSeed;
    let (mut path, mut found) = (String::new(), Vec::new());
    let mut de = serde_json::Deserializer::from_str(text);
    let object = Kind::Obj(fields);
    let check = Check {
        kind: &object,
        path: &mut path,
        found: &mut found,
    };
    // Not JSON (which the importers never pass): nothing said.
    match check.deserialize(&mut de).and_then(|()| de.end()) {
        Ok(()) => found,
        Err(_) => Vec::new(),
    }
}

/// What [`wrong_types`] says of one value, the JSON `text` of the field at
/// `path` (a field of a line read on its own: the line's other fields are
/// not walked again), of `kind`; `None` when it cannot be read (a number
/// out of range), for which [`wrong_types`] says nothing of the whole line.
#[cfg(feature = "anthropic")]
pub(super) fn wrong_type(text: &str, path: &str, kind: &'static Kind) -> Option<Vec<String>> {
    use serde::de::DeserializeSeed;
    let (mut path, mut found) = (path.to_owned(), Vec::new());
    let mut de = serde_json::Deserializer::from_str(text);
    let check = Check {
        kind,
        path: &mut path,
        found: &mut found,
    };
    check.deserialize(&mut de).and_then(|()| de.end()).ok()?;
    Some(found)
}

/// Checks one value against its kind, as it is read.
struct Check<'p> {
    kind: &'p Kind,
    path: &'p mut String,
    found: &'p mut Vec<String>,
}

impl Check<'_> {
    /// The value is `found` (`a number`…): said unless it is of the kind.
    fn is(self, found: &str, right: bool) {
        if right {
            return;
        }
        let want = match self.kind {
            Kind::Str => "a string",
            Kind::Bool => "a boolean",
            Kind::Num => "a number",
            Kind::Obj(_) => "an object",
            Kind::Arr(_) => "an array",
            Kind::StrOrArr(_) => "a string or an array",
            Kind::Any => return,
        };
        self.found.push(format!(
            "`{}` is {found} where {want} belongs, so it is not read as one",
            self.path
        ));
    }
}

impl<'de> de::DeserializeSeed<'de> for Check<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        match self.kind {
            Kind::Any => {
                IgnoredAny::deserialize(d)?;
                Ok(())
            }
            // Told by the value's first character, as its text is skipped
            // over: a string is not unescaped (which a reading of its type
            // would do). A string-or-array is read by its type: telling it
            // first would walk an array twice.
            Kind::Str | Kind::Bool | Kind::Num => {
                let raw = <&serde_json::value::RawValue>::deserialize(d)?;
                self.raw(raw.get()).map_err(de::Error::custom)
            }
            Kind::Obj(_) | Kind::Arr(_) | Kind::StrOrArr(_) => d.deserialize_any(self),
        }
    }
}

impl Check<'_> {
    /// Checks the value whose JSON text is `text`, as [`Visitor`] does.
    fn raw(self, text: &str) -> Result<(), serde_json::Error> {
        match text.as_bytes().first() {
            Some(b'"') => self.visit_str(""),
            Some(b't' | b'f') => self.visit_bool(true),
            Some(b'n') => Ok(()),
            Some(b'{') => {
                self.is("an object", false);
                Ok(())
            }
            Some(b'[') => {
                self.is("an array", false);
                Ok(())
            }
            // A number, which fails to read as its type is read when out
            // of range.
            _ => {
                serde_json::from_str::<serde_json::Number>(text)?;
                self.visit_u64(0)
            }
        }
    }
}

impl<'de> Visitor<'de> for Check<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        let right = matches!(self.kind, Kind::Bool);
        self.is("a boolean", right);
        Ok(())
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        let right = matches!(self.kind, Kind::Num);
        self.is("a number", right);
        Ok(())
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.visit_u64(0)
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.visit_u64(0)
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        let right = matches!(self.kind, Kind::Str | Kind::StrOrArr(_));
        self.is("a string", right);
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (Kind::Arr(of) | Kind::StrOrArr(of)) = *self.kind else {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            self.is("an array", false);
            return Ok(());
        };
        for i in 0.. {
            let len = self.path.len();
            let _ = write!(self.path, "[{i}]");
            let item = seq.next_element_seed(Check {
                kind: of,
                path: &mut *self.path,
                found: &mut *self.found,
            })?;
            self.path.truncate(len);
            if item.is_none() {
                break;
            }
        }
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let Kind::Obj(fields) = *self.kind else {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            self.is("an object", false);
            return Ok(());
        };
        // What each field of the table holds wrong, by its place in the
        // table (a key written twice: its last value, as a map keeps it).
        let mut said: Vec<(usize, Vec<String>)> = Vec::new();
        while let Some(at) = map.next_key_seed(FieldOf(fields))? {
            let Some(at) = at else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let (key, kind) = &fields[at];
            let len = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            self.path.push_str(key);
            let mut found = Vec::new();
            map.next_value_seed(Check {
                kind,
                path: &mut *self.path,
                found: &mut found,
            })?;
            self.path.truncate(len);
            said.retain(|(field, _)| *field != at);
            said.push((at, found));
        }
        said.sort_by_key(|(field, _)| *field);
        self.found
            .extend(said.into_iter().flat_map(|(_, found)| found));
        Ok(())
    }
}

/// A key of an object: its place among the table's fields, if it has one
/// (read without keeping the key).
struct FieldOf(&'static [Field]);

impl<'de> de::DeserializeSeed<'de> for FieldOf {
    type Value = Option<usize>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Option<usize>, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for FieldOf {
    type Value = Option<usize>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|(name, _)| *name == key))
    }
}

#[cfg(test)]
mod tests {
    use super::Kind::{Any, Arr, Bool, Num, Obj, Str, StrOrArr};
    use super::*;

    const PART: &[Field] = &[("type", Str), ("n", Num)];
    const TABLE: &[Field] = &[
        ("a", Str),
        ("b", Bool),
        ("c", Obj(&[("d", Num), ("e", Arr(&Str))])),
        ("f", StrOrArr(&Obj(PART))),
        ("g", Any),
        ("h", Num),
    ];

    /// Each field of the wrong type is said once, by its path, in the
    /// order of the table (not of the line); `null`, a field the table
    /// does not name and an `Any` are never wrong.
    #[test]
    fn wrong_types_are_said_by_path_in_table_order() {
        let line = r#"{"h":"7","z":{"a":1},"g":[1,{"x":2}],"f":[{"type":"t","n":1},{"type":2,"n":"x"},"s"],"c":{"e":["ok",3,null],"d":true},"b":null,"a":5}"#;
        assert_eq!(
            wrong_types(line, TABLE),
            [
                "`a` is a number where a string belongs, so it is not read as one",
                "`c.d` is a boolean where a number belongs, so it is not read as one",
                "`c.e[1]` is a number where a string belongs, so it is not read as one",
                "`f[1].type` is a number where a string belongs, so it is not read as one",
                "`f[1].n` is a string where a number belongs, so it is not read as one",
                "`f[2]` is a string where an object belongs, so it is not read as one",
                "`h` is a string where a number belongs, so it is not read as one",
            ]
        );
        assert!(wrong_types(r#"{"a":"s","f":"text","c":{"e":[]}}"#, TABLE).is_empty());
        assert_eq!(
            wrong_types(r#"{"c":[1],"f":{"type":"t"}}"#, TABLE),
            [
                "`c` is an array where an object belongs, so it is not read as one",
                "`f` is an object where a string or an array belongs, so it is not read as one",
            ]
        );
    }
}
