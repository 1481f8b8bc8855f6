//! The body of an encoded request: a JSON value, written with each tool call's
//! arguments in the order the model wrote them.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::ops::{Deref, DerefMut};

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use crate::message::RawJson;
use crate::{Message, ToolArguments, ToolCall};

/// The JSON body of a request, as an encoder made it.
///
/// It is a [`serde_json::Value`] to read or change (it derefs to one), and it
/// serializes with each tool call's arguments in the order the model wrote
/// them, where a `Value` would sort their keys. Send it with
/// `serde_json::to_vec(&encoded.body)` (as the `http` feature's client and
/// `agentmsg project` do); [`into_value`](Self::into_value) gives the bare
/// value, sorted.
///
/// Where the body was changed after encoding so that a call's arguments are no
/// longer the ones the model wrote, the changed value is written as it is.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # #[cfg(feature = "anthropic")] {
/// use agentmsg::providers::{anthropic, Request};
/// use agentmsg::{AssistantMessage, Message, ToolArguments, ToolCall, ToolResultMessage};
/// let arguments: ToolArguments = r#"{"path":"a.rs","oldText":"x","newText":"y"}"#.parse()?;
/// let messages = vec![
///     Message::user("Fix it."),
///     Message::Assistant(AssistantMessage::new([ToolCall::new("t1", "edit", arguments)])),
///     Message::ToolResult(ToolResultMessage::new("t1", "edit", ["done"])),
/// ];
/// let encoded = anthropic::encode_request(&Request::new("claude-sonnet-4-5", &messages))?;
/// let json = serde_json::to_string(&encoded.body)?;
/// assert!(json.contains(r#""input":{"path":"a.rs","oldText":"x","newText":"y"}"#));
/// assert_eq!(encoded.body["messages"][1]["content"][0]["input"]["path"], "a.rs");
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Default)]
pub struct Body {
    value: Value,
    /// JSON texts to write in place of the value at their path, sorted by
    /// path.
    verbatim: Vec<Verbatim>,
}

#[derive(Clone)]
struct Verbatim {
    path: Vec<Step>,
    json: RawJson,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Step {
    Key(&'static str),
    Index(usize),
}

impl Body {
    /// A body of this value, written as `serde_json` writes it.
    pub fn new(value: Value) -> Self {
        Self {
            value,
            verbatim: Vec::new(),
        }
    }

    /// The value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value (object keys in serde_json's order).
    pub fn into_value(self) -> Value {
        self.value
    }

    /// A body whose tool calls are found by `locate` in the blocks of the
    /// messages at `value[list][i][blocks][j]`: it gives a call's id and the
    /// keys from the block down to its arguments. The `k`th call of an id in
    /// the body is the `k`th call of that id among `calls`.
    #[cfg_attr(not(any(feature = "anthropic", feature = "gemini")), allow(dead_code))]
    pub(crate) fn with_arguments<'a>(
        value: Value,
        calls: impl IntoIterator<Item = &'a ToolCall>,
        (list, blocks): (&'static str, &'static str),
        locate: impl Fn(&Value) -> Option<(&str, &'static [&'static str])>,
    ) -> Self {
        let mut by_id: HashMap<&str, VecDeque<&ToolArguments>> = HashMap::new();
        for call in calls {
            by_id
                .entry(call.id.as_str())
                .or_default()
                .push_back(&call.arguments);
        }
        let mut verbatim = Vec::new();
        let messages = value.get(list).and_then(Value::as_array);
        for (i, message) in messages.into_iter().flatten().enumerate() {
            let content = message.get(blocks).and_then(Value::as_array);
            for (j, block) in content.into_iter().flatten().enumerate() {
                let Some((id, keys)) = locate(block) else {
                    continue;
                };
                let Some(arguments) = by_id.get_mut(id).and_then(VecDeque::pop_front) else {
                    continue;
                };
                if arguments.is_empty() {
                    continue;
                }
                let mut path = vec![
                    Step::Key(list),
                    Step::Index(i),
                    Step::Key(blocks),
                    Step::Index(j),
                ];
                path.extend(keys.iter().map(|&k| Step::Key(k)));
                verbatim.push(Verbatim {
                    path,
                    json: arguments.as_raw().clone(),
                });
            }
        }
        verbatim.sort_by(|a, b| a.path.cmp(&b.path));
        Self { value, verbatim }
    }
}

impl From<Value> for Body {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

impl From<Body> for Value {
    fn from(body: Body) -> Self {
        body.value
    }
}

impl Deref for Body {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.value
    }
}

impl DerefMut for Body {
    fn deref_mut(&mut self) -> &mut Value {
        &mut self.value
    }
}

impl fmt::Debug for Body {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.value, f)
    }
}

impl fmt::Display for Body {
    /// The JSON text, as it is sent.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl PartialEq for Body {
    fn eq(&self, other: &Self) -> bool {
        self.value == other.value
    }
}

impl PartialEq<Value> for Body {
    fn eq(&self, other: &Value) -> bool {
        self.value == *other
    }
}

impl Serialize for Body {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Placed {
            value: &self.value,
            verbatim: &self.verbatim,
            depth: 0,
        }
        .serialize(serializer)
    }
}

/// A value with the verbatim texts below it (their paths from `depth` on).
struct Placed<'a> {
    value: &'a Value,
    verbatim: &'a [Verbatim],
    depth: usize,
}

/// A step of a path into the value being written.
#[derive(Clone, Copy)]
enum At<'a> {
    Key(&'a str),
    Index(usize),
}

/// How `step` sorts against `at` (keys before indices, as [`Step`] derives).
fn compare(step: &Step, at: At<'_>) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (step, at) {
        (Step::Key(a), At::Key(b)) => (*a).cmp(b),
        (Step::Index(a), At::Index(b)) => a.cmp(&b),
        (Step::Key(_), At::Index(_)) => Ordering::Less,
        (Step::Index(_), At::Key(_)) => Ordering::Greater,
    }
}

impl<'a> Placed<'a> {
    /// The verbatim texts under the child at `at`.
    fn under(&self, at: At<'_>) -> &'a [Verbatim] {
        let depth = self.depth;
        let verbatim: &'a [Verbatim] = self.verbatim;
        let start =
            verbatim.partition_point(|v| v.path.get(depth).is_some_and(|s| compare(s, at).is_lt()));
        let len = verbatim[start..]
            .partition_point(|v| v.path.get(depth).is_some_and(|s| compare(s, at).is_eq()));
        &verbatim[start..start + len]
    }
}

impl Serialize for Placed<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.verbatim.is_empty() {
            return self.value.serialize(serializer);
        }
        if let [only] = self.verbatim {
            // Written as the model wrote it while it still holds the same value.
            if only.path.len() == self.depth && only.json.to_value() == *self.value {
                return Written(&only.json).serialize(serializer);
            }
        }
        match self.value {
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (key, value) in map {
                    let verbatim = self.under(At::Key(key));
                    out.serialize_entry(
                        key,
                        &Placed {
                            value,
                            verbatim,
                            depth: self.depth + 1,
                        },
                    )?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for (i, value) in items.iter().enumerate() {
                    out.serialize_element(&Placed {
                        value,
                        verbatim: self.under(At::Index(i)),
                        depth: self.depth + 1,
                    })?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// The tool calls of `messages`, in order.
#[cfg_attr(not(any(feature = "anthropic", feature = "gemini")), allow(dead_code))]
pub(crate) fn calls_of(messages: &[Message]) -> impl Iterator<Item = &ToolCall> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Assistant(assistant) => Some(assistant),
            _ => None,
        })
        .flat_map(|assistant| assistant.tool_calls())
}

/// A JSON text written value by value, keys in its order, so that a pretty
/// writer indents it (its numbers and strings as they are written). Past
/// [`MAX_JSON_DEPTH`](crate::transcript::MAX_JSON_DEPTH) levels it is written as the text it is.
struct Written<'a>(&'a RawJson);

impl Serialize for Written<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if crate::json::deep::max_depth(self.0.get().as_bytes()) > crate::transcript::MAX_JSON_DEPTH
        {
            return self.0.serialize(serializer);
        }
        match self.0.get().as_bytes().first() {
            Some(b'{') => {
                let entries = self.0.entries();
                let mut out = serializer.serialize_map(Some(entries.len()))?;
                for (key, value) in &entries {
                    out.serialize_entry(key, &Written(value))?;
                }
                out.end()
            }
            Some(b'[') => {
                let elements = self.0.elements();
                let mut out = serializer.serialize_seq(Some(elements.len()))?;
                for element in &elements {
                    out.serialize_element(&Written(element))?;
                }
                out.end()
            }
            _ => self.0.serialize(serializer),
        }
    }
}
