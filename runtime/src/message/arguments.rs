//! The arguments of a tool call, kept in the order the model wrote them.

use std::fmt;

use serde::de::{self, DeserializeOwned};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::json::deep::from_deep_str;
use crate::json::raw_json::RawJson;

/// The arguments of a [`ToolCall`](crate::ToolCall): a JSON object kept as the
/// text the model wrote, without the whitespace between tokens.
///
/// Keys stay in the model's order (at every depth), and numbers as written,
/// from the provider's response or stream through the transcript, a session,
/// an import and back into every request body. A `serde_json::Map` would sort
/// them (unless every crate in a build took serde_json's `preserve_order`), so
/// the model would get back arguments in an order it never wrote.
///
/// Read them typed with [`parse`](Self::parse), one field with
/// [`get`](Self::get), in order with [`entries`](Self::entries), or all at
/// once with [`to_map`](Self::to_map) (serde_json's order).
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// use agentmsg::ToolArguments;
/// let args = ToolArguments::from_json(r#"{"path": "a.rs", "oldText": "x", "newText": "y"}"#)?;
/// assert_eq!(args.as_str(), r#"{"path":"a.rs","oldText":"x","newText":"y"}"#);
/// assert_eq!(args.get("path"), Some(serde_json::json!("a.rs")));
///
/// #[derive(serde::Deserialize)]
/// #[serde(rename_all = "camelCase")]
/// struct Edit { path: String, old_text: String, new_text: String }
/// let edit: Edit = args.parse()?;
/// assert_eq!((edit.path.as_str(), edit.old_text.as_str(), edit.new_text.as_str()), ("a.rs", "x", "y"));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ToolArguments(RawJson);

impl ToolArguments {
    /// No arguments: `{}`.
    pub fn new() -> Self {
        Self::default()
    }

    /// The arguments in this JSON text, which must be one JSON object.
    ///
    /// # Errors
    /// When `json` is not JSON, or is JSON but not an object.
    pub fn from_json(json: &str) -> Result<Self, serde_json::Error> {
        Self::from_raw(RawJson::from_json(json)?)
    }

    /// The arguments in a value. A value that is not an object is kept as
    /// `{"value": …}`, so nothing is lost; `null` is `{}`.
    pub fn from_value(value: Value) -> Self {
        match value {
            Value::Object(map) => Self::from(map),
            Value::Null => Self::new(),
            other => Self::wrap(&other),
        }
    }

    /// `{"value": value}`: what is kept of arguments that are not an object.
    pub(crate) fn wrap(value: &Value) -> Self {
        let mut map = Map::new();
        map.insert("value".to_owned(), value.clone());
        Self::from(map)
    }

    /// `{"value": json}` for a JSON text that is not an object (`json` must be
    /// one JSON value).
    #[cfg_attr(
        not(any(feature = "openai-chat", feature = "openai-responses")),
        allow(dead_code)
    )]
    pub(crate) fn wrap_raw(json: &RawJson) -> Self {
        let mut text = String::with_capacity(json.get().len() + 10);
        text.push_str("{\"value\":");
        text.push_str(json.get());
        text.push('}');
        // A valid value inside an object with one key is a valid object.
        Self(RawJson::from_json(&text).unwrap_or_else(|_| RawJson::from_value(&Value::Null)))
    }

    /// The arguments held by a checked JSON value: an error when it is not an
    /// object.
    pub(crate) fn from_raw(raw: RawJson) -> Result<Self, serde_json::Error> {
        if raw.is_object() {
            Ok(Self(raw))
        } else {
            Err(de::Error::invalid_type(
                de::Unexpected::Other(kind_of(raw.get())),
                &"a JSON object",
            ))
        }
    }

    /// The JSON text of the object, compact, keys in the model's order.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }

    /// The arguments as a value of type `T` (a struct of the tool's
    /// parameters, say). Arguments are read up to
    /// [`MAX_JSON_DEPTH`](crate::transcript::MAX_JSON_DEPTH) levels deep, as pi's JavaScript reads
    /// them (serde_json alone stops at 128).
    ///
    /// # Errors
    /// When the object does not fit `T`, or is nested deeper.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        from_deep_str(self.as_str())
    }

    /// The value of one argument, if there is one by that name.
    pub fn get(&self, name: &str) -> Option<Value> {
        self.entries()
            .into_iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.to_value())
    }

    /// Each argument's name and JSON text, in the model's order.
    pub fn entries(&self) -> Vec<(String, RawJson)> {
        self.0.entries()
    }

    /// Whether there are no arguments (`{}`).
    pub fn is_empty(&self) -> bool {
        self.as_str() == "{}"
    }

    /// The arguments as a map (keys in serde_json's order, which sorts them
    /// unless `preserve_order` is on). Empty for arguments nested past
    /// [`MAX_JSON_DEPTH`](crate::transcript::MAX_JSON_DEPTH) levels, which no `Value` holds here
    /// (their text, [`as_str`](Self::as_str), is whole).
    pub fn to_map(&self) -> Map<String, Value> {
        from_deep_str(self.as_str()).unwrap_or_default()
    }

    /// The arguments as a JSON value (an object).
    pub fn to_value(&self) -> Value {
        Value::Object(self.to_map())
    }

    /// The checked JSON value underneath.
    pub fn as_raw(&self) -> &RawJson {
        &self.0
    }
}

/// What a JSON text holds, for an error that says what was found instead.
fn kind_of(json: &str) -> &'static str {
    match json.as_bytes().first() {
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b't' | b'f') => "a boolean",
        Some(b'n') => "null",
        _ => "a number",
    }
}

impl Default for ToolArguments {
    fn default() -> Self {
        Self(RawJson::empty_object())
    }
}

impl fmt::Debug for ToolArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for ToolArguments {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl From<Map<String, Value>> for ToolArguments {
    fn from(map: Map<String, Value>) -> Self {
        Self(RawJson::from_value(&Value::Object(map)))
    }
}

impl From<Value> for ToolArguments {
    fn from(value: Value) -> Self {
        Self::from_value(value)
    }
}

impl std::str::FromStr for ToolArguments {
    type Err = serde_json::Error;

    fn from_str(json: &str) -> Result<Self, Self::Err> {
        Self::from_json(json)
    }
}

impl Serialize for ToolArguments {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

/// Reads a JSON object, keeping its text; anything else is an error (what a
/// lenient reader keeps as `{"value": …}` is its own choice).
impl<'de> Deserialize<'de> for ToolArguments {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::from_raw(RawJson::deserialize(deserializer)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_order_at_every_depth() {
        let text = r#"{"z":1,"a":{"y":[{"q":1,"b":2}],"c":1.50}}"#;
        let args: ToolArguments = serde_json::from_str(text).unwrap();
        assert_eq!(args.as_str(), text);
        assert_eq!(serde_json::to_string(&args).unwrap(), text);
        let names: Vec<String> = args.entries().into_iter().map(|(k, _)| k).collect();
        assert_eq!(names, ["z", "a"]);
        // Through a `Value` (serde_json's own buffer) the order is serde_json's.
        let value: Value = serde_json::from_str(text).unwrap();
        let through: ToolArguments = serde_json::from_value(value).unwrap();
        assert_eq!(through.to_map(), args.to_map());
    }

    #[test]
    fn not_an_object_is_an_error_that_says_what_it_found() {
        let err = serde_json::from_str::<ToolArguments>("[1]").unwrap_err();
        assert!(err.to_string().contains("an array"), "{err}");
        assert!(ToolArguments::from_json("\"a\"").is_err());
        assert_eq!(
            ToolArguments::from_value(serde_json::json!([1])).as_str(),
            r#"{"value":[1]}"#
        );
        assert_eq!(ToolArguments::from_value(Value::Null).as_str(), "{}");
        let raw = RawJson::from_json("[1, 2]").unwrap();
        assert_eq!(ToolArguments::wrap_raw(&raw).as_str(), r#"{"value":[1,2]}"#);
    }

    #[test]
    fn the_same_object_written_with_spaces_is_equal() {
        let a = ToolArguments::from_json("{ \"a\" : 1 }").unwrap();
        let b = ToolArguments::from_json(r#"{"a":1}"#).unwrap();
        assert_eq!(a, b);
        assert!(!a.is_empty());
        assert!(ToolArguments::new().is_empty());
        assert_eq!(a.get("a"), Some(serde_json::json!(1)));
        assert_eq!(a.get("b"), None);
    }
}
