//! [`RawJson`]: a JSON value kept as the text it was read from.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};

use super::key::Key;

/// A JSON value kept as the text it was read from, without the whitespace
/// between tokens (so it always fits on one transcript line): keys in their
/// order, numbers and strings as written, written back byte for byte, compared
/// and hashed by that text. It holds what a provider wrote that agentmsg
/// carries without modelling (a server-side tool block, the citations of a
/// text).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::message::RawJson;
/// let raw = RawJson::from_json(r#"{"b":1, "a":[true]}"#)?;
/// assert_eq!(raw.get(), r#"{"b":1,"a":[true]}"#);
/// assert_eq!(serde_json::to_string(&raw)?, r#"{"b":1,"a":[true]}"#);
/// // Pretty JSON (a transcript written as an array) is kept on one line.
/// let pretty = RawJson::from_json("{\n  \"text\": \"a b\\n\"\n}")?;
/// assert_eq!(pretty.get(), r#"{"text":"a b\n"}"#);
/// assert_eq!(raw.to_value()["a"][0], true);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone)]
pub struct RawJson(pub(crate) Box<serde_json::value::RawValue>);

impl RawJson {
    /// The value of this JSON text (leading and trailing whitespace trimmed).
    ///
    /// # Errors
    /// When `json` is not one JSON value.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        // Checked as written first: in one valid JSON value no two tokens
        // meet once the whitespace between them is gone (`1 2` would).
        let checked = serde_json::value::RawValue::from_string(json.trim().to_owned())?;
        Ok(Self::compacted(checked))
    }

    /// A checked JSON text, without the whitespace between its tokens.
    fn compacted(raw: Box<serde_json::value::RawValue>) -> Self {
        if !spaced(raw.get()) {
            return Self(raw);
        }
        let text = raw.get();
        // Whitespace out of a valid value leaves a valid value.
        match serde_json::value::RawValue::from_string(compact(text)) {
            Ok(compacted) => Self(compacted),
            Err(_) => Self(raw),
        }
    }

    /// `value` written as compact JSON.
    pub fn from_value(value: &serde_json::Value) -> Self {
        // A `Value` always serializes (its keys are strings); `null` would
        // stand in should it ever fail, rather than a panic.
        Self(
            serde_json::value::to_raw_value(value)
                .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned()),
        )
    }

    /// `{}`.
    pub(crate) fn empty_object() -> Self {
        Self::compacted(
            serde_json::value::RawValue::from_string("{}".to_owned())
                .unwrap_or_else(|_| serde_json::value::RawValue::NULL.to_owned()),
        )
    }

    /// The JSON text, as it was read.
    pub fn get(&self) -> &str {
        self.0.get()
    }

    /// The JSON value (object keys in serde_json's order).
    pub fn to_value(&self) -> serde_json::Value {
        // The text was parsed once already: it parses again (as deep as
        // `read_deep_json` reads; a deeper one is `null`).
        super::deep::from_deep_str(self.get()).unwrap_or(serde_json::Value::Null)
    }

    /// The `"type"` of a JSON object, if it has a string one.
    pub fn type_name(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Tagged {
            #[serde(rename = "type")]
            kind: Option<String>,
        }
        serde_json::from_str::<Tagged>(self.get())
            .ok()
            .and_then(|t| t.kind)
    }

    /// Whether the value is a JSON object.
    pub fn is_object(&self) -> bool {
        self.get().starts_with('{')
    }

    /// Each key of an object and the text of its value, in order (empty for
    /// anything but an object).
    pub(crate) fn entries(&self) -> Vec<(String, RawJson)> {
        struct Entries;
        impl<'de> de::Visitor<'de> for Entries {
            type Value = Vec<(String, RawJson)>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<String, RawJson>()? {
                    entries.push(entry);
                }
                Ok(entries)
            }
        }
        if !self.is_object() {
            return Vec::new();
        }
        // Each value is taken as text, without recursion: at any depth.
        serde_json::Deserializer::from_str(self.get())
            .deserialize_map(Entries)
            .unwrap_or_default()
    }

    /// Each element of an array as text, in order (empty for anything but
    /// an array).
    #[cfg_attr(not(any_provider), allow(dead_code))]
    pub(crate) fn elements(&self) -> Vec<RawJson> {
        if !self.get().starts_with('[') {
            return Vec::new();
        }
        serde_json::from_str(self.get()).unwrap_or_default()
    }

    /// This object with `updates` set: a key it has keeps its place, a new one
    /// goes last (as JavaScript sets a key). Anything but an object is kept.
    #[cfg_attr(not(feature = "anthropic"), allow(dead_code))]
    pub(crate) fn with_entries(&self, updates: Vec<(&str, RawJson)>) -> RawJson {
        if !self.is_object() || updates.is_empty() {
            return self.clone();
        }
        let mut updates: Vec<(&str, Option<RawJson>)> =
            updates.into_iter().map(|(k, v)| (k, Some(v))).collect();
        let mut text = String::from("{");
        let push = |text: &mut String, key: &str, value: &RawJson| {
            if text.len() > 1 {
                text.push(',');
            }
            text.push_str(&serde_json::Value::from(key).to_string());
            text.push(':');
            text.push_str(value.get());
        };
        for (key, value) in self.entries() {
            let update = updates
                .iter_mut()
                .find(|(k, _)| *k == key)
                .and_then(|(_, v)| v.take());
            push(&mut text, &key, update.as_ref().unwrap_or(&value));
        }
        for (key, value) in &updates {
            if let Some(value) = value {
                push(&mut text, key, value);
            }
        }
        text.push('}');
        RawJson::from_json(&text).unwrap_or_else(|_| self.clone())
    }
}

impl fmt::Debug for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.get())
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.get() == other.get()
    }
}

impl Eq for RawJson {}

impl std::hash::Hash for RawJson {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.get().hash(state);
    }
}

impl Serialize for RawJson {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Whether the JSON text `json` has whitespace between its tokens (not
/// only inside its strings, as a text of prose has: such a value is kept as
/// it is, without being written and checked again).
fn spaced(json: &str) -> bool {
    let bytes = json.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => {
                // Past the string: its closing quote, skipping escapes.
                i += 1;
                loop {
                    let rest = bytes.get(i..).unwrap_or_default();
                    match memchr::memchr2(b'"', b'\\', rest) {
                        Some(at) if rest[at] == b'\\' => i += at + 2,
                        Some(at) => {
                            i += at + 1;
                            break;
                        }
                        None => return false,
                    }
                }
            }
            b' ' | b'\t' | b'\n' | b'\r' => return true,
            _ => i += 1,
        }
    }
    false
}

/// `json` without the whitespace between its tokens (the text of its strings
/// untouched).
fn compact(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in json.chars() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
        } else if matches!(c, ' ' | '\t' | '\n' | '\r') {
            continue;
        }
        out.push(c);
    }
    out
}

/// The name under which serde_json hands out the text of a value instead of
/// the value (what its `RawValue` asks for).
const RAW_TOKEN: &str = "$serde_json::private::RawValue";

/// Reads the exact text of the value from serde_json's readers (a `&str`, a
/// slice, a reader or a `Value`); from any other deserializer (serde's
/// buffered content, another format), the value itself, written compactly.
impl<'de> Deserialize<'de> for RawJson {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_newtype_struct(RAW_TOKEN, RawVisitor)
    }
}

struct RawVisitor;

impl<'de> de::Visitor<'de> for RawVisitor {
    type Value = RawJson;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<RawJson, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<RawJson, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Ok(RawJson::empty_object());
        };
        if first == RAW_TOKEN {
            // serde_json's reader: the one entry is the value's text.
            let text: Key<'de> = map.next_value()?;
            return serde_json::value::RawValue::from_string(text.into_string())
                .map(RawJson::compacted)
                .map_err(de::Error::custom);
        }
        // Another reader gave the object itself: written in its order, each
        // value read the same way (so nested objects keep theirs too).
        let mut text = String::from("{");
        let mut name = first;
        loop {
            text.push_str(&serde_json::to_string(&name).map_err(de::Error::custom)?);
            text.push(':');
            text.push_str(map.next_value::<RawJson>()?.get());
            match map.next_key::<String>()? {
                Some(next) => {
                    text.push(',');
                    name = next;
                }
                None => break,
            }
        }
        text.push('}');
        raw_text(text)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<RawJson, A::Error> {
        let mut text = String::from("[");
        while let Some(item) = seq.next_element::<RawJson>()? {
            if text.len() > 1 {
                text.push(',');
            }
            text.push_str(item.get());
        }
        text.push(']');
        raw_text(text)
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<RawJson, E> {
        Ok(RawJson::from_value(&v.into()))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<RawJson, E> {
        Ok(RawJson::from_value(&v.into()))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<RawJson, E> {
        Ok(RawJson::from_value(&v.into()))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<RawJson, E> {
        Ok(RawJson::from_value(&v.into()))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<RawJson, E> {
        Ok(RawJson::from_value(&v.into()))
    }

    fn visit_unit<E: de::Error>(self) -> Result<RawJson, E> {
        Ok(RawJson::from_value(&serde_json::Value::Null))
    }

    fn visit_none<E: de::Error>(self) -> Result<RawJson, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<RawJson, D::Error> {
        d.deserialize_any(self)
    }
}

/// A compact JSON text written from checked values.
fn raw_text<E: de::Error>(text: String) -> Result<RawJson, E> {
    serde_json::value::RawValue::from_string(text)
        .map(RawJson)
        .map_err(de::Error::custom)
}

#[cfg(test)]
mod tests {
    use super::{compact, spaced};

    #[test]
    fn whitespace_counts_only_between_tokens() {
        for (json, between) in [
            (r#"{"a":"b c","d":[1,2]}"#, false),
            (r#"{"a":"b \" c"}"#, false),
            (r#"{"a":"b \\", "c":1}"#, true),
            (r#"{"a": 1}"#, true),
            ("[1,\n2]", true),
            (r#""é ü""#, false),
            (r#""unterminated \"#, false),
        ] {
            assert_eq!(spaced(json), between, "{json}");
            assert_eq!(compact(json) != json, between, "{json}");
        }
    }
}
