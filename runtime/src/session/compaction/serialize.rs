//! The summariser's input: a conversation written as a transcript, and the
//! prompt around it, as pi writes them. JavaScript is pi's language, so tool
//! arguments are written as its `JSON.stringify` writes them, and lengths
//! are counted in UTF-16 units, as its strings count them.

use std::borrow::Borrow;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use crate::message::utf16_len;
use crate::{AssistantContent, Message, ToolArguments};

/// How many characters (UTF-16 units, as pi's JavaScript counts them) of a
/// tool result [`serialize_conversation`] keeps (pi's
/// `TOOL_RESULT_MAX_CHARS`).
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// The conversation as text for a summariser, as pi's
/// `serializeConversation` writes it, so the model reads a transcript
/// instead of continuing a conversation: `[User]: …`, `[Assistant
/// thinking]: …`, `[Assistant]: …`, `[Assistant tool calls]: name(key=json,
/// …); …` and `[Tool result]: …` (cut after [`TOOL_RESULT_MAX_CHARS`]
/// characters), parts separated by a blank line. System messages, images and
/// empty parts are left out. Each argument's value is written as
/// JavaScript's `JSON.stringify` writes it, in the order JavaScript keeps an
/// object's keys (integer keys first), as pi writes them.
///
/// ```
/// # extern crate agentmsg_runtime as agentmsg;
/// # use agentmsg::{AssistantMessage, Message, ToolCall};
/// # use agentmsg::session::serialize_conversation;
/// let call = ToolCall::new("call_1", "read", serde_json::json!({"path": "a.rs"}));
/// let messages = [
///     Message::user("What is in a.rs?"),
///     Message::Assistant(AssistantMessage::new([call])),
///     Message::tool_result("call_1", "read", "fn main() {}"),
/// ];
/// assert_eq!(
///     serialize_conversation(&messages),
///     "[User]: What is in a.rs?\n\n[Assistant tool calls]: read(path=\"a.rs\")\n\n[Tool result]: fn main() {}"
/// );
/// ```
pub fn serialize_conversation<M: Borrow<Message>>(messages: &[M]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for message in messages {
        match message.borrow() {
            Message::User(u) => {
                let text = u.text();
                if !text.is_empty() {
                    parts.push(format!("[User]: {text}"));
                }
            }
            Message::Assistant(a) => {
                let mut text = Vec::new();
                let mut thinking = Vec::new();
                let mut calls = Vec::new();
                for block in &a.content {
                    match block {
                        AssistantContent::Text(t) => text.push(t.text.as_str()),
                        AssistantContent::Thinking(t) => thinking.push(t.thinking.as_str()),
                        AssistantContent::ToolCall(c) => {
                            let arguments: Vec<String> = js_entries(&c.arguments)
                                .into_iter()
                                .map(|(k, v)| format!("{k}={v}"))
                                .collect();
                            calls.push(format!("{}({})", c.name, arguments.join(", ")));
                        }
                        _ => {}
                    }
                }
                if !thinking.is_empty() {
                    parts.push(format!("[Assistant thinking]: {}", thinking.join("\n")));
                }
                if !text.is_empty() {
                    parts.push(format!("[Assistant]: {}", text.join("\n")));
                }
                if !calls.is_empty() {
                    parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
                }
            }
            Message::ToolResult(r) => {
                let text = r.text();
                if !text.is_empty() {
                    parts.push(format!("[Tool result]: {}", truncate(&text)));
                }
            }
            Message::System(_) => {}
        }
    }
    parts.join("\n\n")
}

/// `text` cut after [`TOOL_RESULT_MAX_CHARS`] UTF-16 units, with pi's note of
/// how many more there were. Where the cut splits a character in two (pi's
/// `slice` then keeps half of it, which no provider reads as a character),
/// the half is written as U+FFFD.
fn truncate(text: &str) -> std::borrow::Cow<'_, str> {
    let total = utf16_len(text);
    if total <= TOOL_RESULT_MAX_CHARS {
        return text.into();
    }
    let mut units = 0;
    let mut end = 0;
    let mut half = false;
    for (at, c) in text.char_indices() {
        let width = c.len_utf16();
        if units + width > TOOL_RESULT_MAX_CHARS {
            half = units < TOOL_RESULT_MAX_CHARS;
            end = at;
            break;
        }
        units += width;
        end = at + c.len_utf8();
    }
    let more = total - TOOL_RESULT_MAX_CHARS;
    let half = if half { "\u{FFFD}" } else { "" };
    format!(
        "{}{half}\n\n[... {more} more characters truncated]",
        &text[..end]
    )
    .into()
}

/// The text a summariser is asked, as pi builds it: the conversation in
/// `<conversation>` tags, the previous summary (if any) in
/// `<previous-summary>` tags, then the prompt
/// ([`UPDATE_SUMMARY_PROMPT`](super::UPDATE_SUMMARY_PROMPT) when there is a
/// previous summary, [`DEFAULT_SUMMARY_PROMPT`](super::DEFAULT_SUMMARY_PROMPT)
/// otherwise) and, if given, `Additional focus: …`. pi's own prompts are
/// [`CompactionPolicy::Pi`](super::CompactionPolicy::Pi)'s
/// ([`CompactionPlan::prompt`](super::CompactionPlan::prompt)).
pub fn summary_prompt(conversation: &str, previous: Option<&str>, focus: Option<&str>) -> String {
    prompt_with(
        conversation,
        previous,
        focus,
        super::DEFAULT_SUMMARY_PROMPT,
        super::UPDATE_SUMMARY_PROMPT,
    )
}

/// [`summary_prompt`] with these first-summary and update prompts.
pub(super) fn prompt_with(
    conversation: &str,
    previous: Option<&str>,
    focus: Option<&str>,
    first: &str,
    update: &str,
) -> String {
    let mut text = format!("<conversation>\n{conversation}\n</conversation>\n\n");
    if let Some(previous) = previous {
        text.push_str(&format!(
            "<previous-summary>\n{previous}\n</previous-summary>\n\n"
        ));
        text.push_str(update);
    } else {
        text.push_str(first);
    }
    if let Some(focus) = focus {
        text.push_str(&format!("\n\nAdditional focus: {focus}"));
    }
    text
}

/// A JSON value as JavaScript holds it after `JSON.parse`: numbers are
/// doubles, an object's keys are in JavaScript's order (integer keys first,
/// ascending, then the others as first written; a repeated key keeps its
/// first place and its last value).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Js {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Js>),
    Object(Vec<(String, Js)>),
}

impl<'de> Deserialize<'de> for Js {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(JsVisitor)
    }
}

struct JsVisitor;

impl<'de> Visitor<'de> for JsVisitor {
    type Value = Js;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Js, E> {
        Ok(Js::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Js, E> {
        Ok(Js::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Js, E> {
        Ok(Js::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Js, E> {
        Ok(Js::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Js, E> {
        Ok(Js::Number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Js, E> {
        Ok(Js::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Js, E> {
        Ok(Js::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Js, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Js::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Js, A::Error> {
        let mut entries: Vec<(String, Js)> = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Js>()? {
            match entries.iter_mut().find(|(k, _)| *k == key) {
                Some(entry) => entry.1 = value,
                None => entries.push((key, value)),
            }
        }
        let (mut index, named): (Vec<_>, Vec<_>) = entries
            .into_iter()
            .partition(|(k, _)| array_index(k).is_some());
        index.sort_by_key(|(k, _)| array_index(k));
        index.extend(named);
        Ok(Js::Object(index))
    }
}

/// The key as an array index, if JavaScript reads it as one (its canonical
/// decimal text, below 2³² − 1): such keys come first in an object.
fn array_index(key: &str) -> Option<u32> {
    let n: u32 = key.parse().ok()?;
    (n < u32::MAX && n.to_string() == key).then_some(n)
}

impl Js {
    /// The value of a JSON text, or `None` when it is not one (or is nested
    /// past what the reader reads).
    pub(crate) fn parse(text: &str) -> Option<Js> {
        crate::json::deep::from_deep_str(text).ok()
    }

    /// The value as `JSON.stringify` writes it.
    pub(crate) fn stringify(&self) -> String {
        let mut out = String::new();
        self.write(&mut out);
        out
    }

    fn write(&self, out: &mut String) {
        match self {
            Js::Null => out.push_str("null"),
            Js::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Js::Number(n) => out.push_str(&js_number(*n)),
            Js::String(s) => out.push_str(&serde_json::Value::from(s.as_str()).to_string()),
            Js::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    item.write(out);
                }
                out.push(']');
            }
            Js::Object(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&serde_json::Value::from(key.as_str()).to_string());
                    out.push(':');
                    value.write(out);
                }
                out.push('}');
            }
        }
    }
}

/// A number as JavaScript writes it (`Number.prototype.toString`): the
/// shortest digits that read back the same, positional from 10⁻⁶ to 10²¹,
/// `1e+21` beyond.
pub(crate) fn js_number(n: f64) -> String {
    if !n.is_finite() {
        return "null".to_owned();
    }
    if n == 0.0 {
        return "0".to_owned();
    }
    if n < 0.0 {
        return format!("-{}", js_number(-n));
    }
    // Rust's `{:e}` writes the shortest digits that round-trip.
    let exp = format!("{n:e}");
    let (mantissa, e) = exp.split_once('e').unwrap_or((&exp, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let e: i64 = e.parse().unwrap_or(0);
    let k = digits.len() as i64;
    let n = e + 1;
    if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n - 1 < 0 { '-' } else { '+' };
        let exponent = (n - 1).abs();
        if k == 1 {
            format!("{digits}e{sign}{exponent}")
        } else {
            format!("{}.{}e{sign}{exponent}", &digits[..1], &digits[1..])
        }
    }
}

/// The arguments as JavaScript's `Object.entries` gives them after
/// `JSON.parse`, each value as `JSON.stringify` writes it.
pub(crate) fn js_entries(arguments: &ToolArguments) -> Vec<(String, String)> {
    match Js::parse(arguments.as_str()) {
        Some(Js::Object(entries)) => entries
            .into_iter()
            .map(|(k, v)| (k, v.stringify()))
            .collect(),
        // Arguments are a checked object: kept as written if too deep.
        _ => arguments
            .entries()
            .into_iter()
            .map(|(k, v)| (k, v.get().to_owned()))
            .collect(),
    }
}

/// The arguments as `JSON.stringify` writes them after `JSON.parse`.
pub(crate) fn js_stringify(arguments: &ToolArguments) -> String {
    match Js::parse(arguments.as_str()) {
        Some(value) => value.stringify(),
        None => arguments.as_str().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_javascript_writes_them() {
        for (n, js) in [
            (1.0, "1"),
            (-0.0, "0"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (1.5e-7, "1.5e-7"),
            (0.000001, "0.000001"),
            (123.456, "123.456"),
            (-2.5e30, "-2.5e+30"),
            (9007199254740993.0, "9007199254740992"),
        ] {
            assert_eq!(js_number(n), js, "{n}");
        }
    }

    #[test]
    fn objects_keep_javascripts_key_order() {
        let args = ToolArguments::from_json(r#"{"b":1.0,"2":"x","a":{"10":1,"1":2},"b":3,"01":4}"#)
            .unwrap();
        assert_eq!(
            js_stringify(&args),
            r#"{"2":"x","b":3,"a":{"1":2,"10":1},"01":4}"#
        );
    }

    #[test]
    fn a_cut_through_a_pair_is_marked() {
        let text = format!("{}🦀tail", "a".repeat(TOOL_RESULT_MAX_CHARS - 1));
        let cut = truncate(&text);
        assert!(cut.starts_with(&format!("{}\u{FFFD}\n\n", "a".repeat(1999))));
        assert!(cut.ends_with("[... 5 more characters truncated]"));
    }
}
