//! A Codex CLI rollout (`~/.codex/sessions/…/rollout-*.jsonl`).
//!
//! A rollout is linear: each `response_item` follows the one before it.
//!
//! - `message` items become user, assistant or system messages (`developer` and
//!   `system` roles as system messages); the model's items of one response
//!   (`reasoning`, assistant `message`, `function_call`, `custom_tool_call`,
//!   `local_shell_call`) merge into one assistant message; a
//!   `web_search_call` (a search the provider ran, with no result item) is a
//!   `providerBlock` of that message, as the Responses decoder keeps it; so
//!   are a `tool_search_call` and its `tool_search_output` (the output in the
//!   same message, after its call, as the Responses API takes them back; a
//!   search the client ran ends the response);
//! - an assistant `message` item's `phase` (`commentary`, `final_answer`),
//!   which Codex sends back, and its id when written, go in its first text
//!   block's signature as the Responses codec keeps them (`{"v":1,…}`); a
//!   `refusal` part is text;
//! - `function_call` and `custom_tool_call` become `toolCall` blocks (a
//!   function's arguments in the order the model wrote them, at every depth;
//!   a custom tool's free-form input as `{"input": …}`), their `*_output` items
//!   `toolResult` messages named after the call (an output's content items
//!   as text and images);
//! - a `reasoning` item becomes the block the OpenAI Responses codec makes of
//!   it: the item (`encrypted_content` byte for byte) as compact JSON in a
//!   thinking block's signature, the summary as its text, or a
//!   `redactedThinking` block when it has no summary;
//! - a `compacted` item becomes a `compactionSummary` line that keeps nothing
//!   before it (Codex replaces the history with the summary); one with a
//!   `replacement_history` (Codex's remote compaction, whose `message` is
//!   empty) is the history Codex goes on from, so the line, kept as an
//!   `extension` line of kind `codex.compacted`, starts a new root and the
//!   items follow it as the messages they are (entries `codex:LINE/N`); in
//!   the kept line each item those messages hold whole (a provider block, a
//!   message of text only) is its number `N`, so its text is written once,
//!   and any other is kept as written (a `compaction` item, the
//!   encrypted history only the Responses API reads, as a provider block of
//!   an assistant message, replayed there in place);
//! - a `thread_rolled_back` event (Codex's backtrack, which drops the last
//!   `num_turns` user turns) is an `extension` line that branches off before
//!   the first turn dropped, so what follows continues from there (the
//!   dropped turns stay in the file, off the new path); user messages that
//!   are Codex's context (AGENTS.md, `<environment_context>`…) are no turns;
//! - a `turn_aborted` event (the user interrupted a turn) cuts the calls
//!   still without output: one whose output comes next (the tool ended
//!   after all) has it as its result; the others get the output `aborted`
//!   (a `toolResult` with that text, marked as an error) before what comes
//!   next, said, as Codex fills it in when it next sends the history; an
//!   output written after that is an `extension` line, said;
//! - every other line (`session_meta`, `turn_context`, `event_msg`…) becomes an
//!   `extension` line of kind `codex.<type>` holding it verbatim (its keys in
//!   the order written), as does a provider block its item;
//! - the model an assistant message names is the last `turn_context`'s
//!   `model`, its provider `session_meta`'s `model_provider` (`openai` when
//!   absent); a `token_count` event's `last_token_usage` is the usage of the
//!   model's response it follows (the assistant message made of that
//!   response's items). Codex records no cost; `stats` estimates it from the
//!   catalog.
//!
//! The older rollout layout (items without the `{"type":"response_item",
//! "payload":…}` wrapper) reads the same.
//!
//! Each line is read as typed fields: those every line has (`timestamp`,
//! `type`, `payload`), then its payload's (one `#[derive(Deserialize)]`
//! struct per line type: `session_meta`, `turn_context`, `event_msg`,
//! `compacted`, and the response item), each converted by the function of
//! its type. A field of another JSON type than the one Codex writes is read
//! as absent, and said for a response item's fields (`bad-value`, with the
//! field's path); a line holding half of a UTF-16 character is read with
//! U+FFFD in its place, and said (`lone-surrogate`). The lines are written by the runtime's writer, their `id` and
//! `parentId` by the envelope codec.

use std::collections::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::detect::{LogLines, Reading};
use super::{extension_line, iso_millis, loose, message_line};
use super::{ImportError, ImportWarning, Imported, WarningCode};
use crate::custom::CompactionSummary;
use crate::message::MediaSource;
use crate::message::RawJson;
use crate::providers::openai_responses;
use crate::{AgentMessage, AssistantContent, AssistantMessage, ImageContent};
use crate::{Message, MessageId, ParentId, ProviderBlock, StopReason, SystemMessage};
use crate::{TextContent, ToolArguments, ToolCall, ToolResultContent, ToolResultMessage};
use crate::{Usage, UserContent, UserMessage};

/// The item types of the older rollout layout, written without the
/// `{"type":"response_item","payload":…}` wrapper.
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "tool_search_output",
];

/// The keys of a call item that its `toolCall` block holds (`id` as its
/// signature, as the Responses decoder keeps it).
const CALL_KEYS: &[&str] = &[
    "type",
    "id",
    "call_id",
    "name",
    "arguments",
    "input",
    "action",
    "status",
];

// ---------------------------------------------------------------------------
// The lines, typed: the fields every line is read by, then each type's own.
// ---------------------------------------------------------------------------

/// The fields every rollout line is read by.
#[derive(Deserialize)]
struct Head {
    #[serde(default, deserialize_with = "loose::string")]
    timestamp: Option<String>,
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
    #[serde(default)]
    payload: Option<Box<RawValue>>,
}

/// A `session_meta` line's payload.
#[derive(Deserialize)]
struct SessionMeta {
    #[serde(default, deserialize_with = "loose::string")]
    model_provider: Option<String>,
}

/// A `turn_context` line's payload.
#[derive(Deserialize)]
struct TurnContext {
    #[serde(default, deserialize_with = "loose::string")]
    model: Option<String>,
}

/// An `event_msg` line's payload: the events read are `token_count`,
/// `thread_rolled_back` and `turn_aborted`.
#[derive(Deserialize)]
struct EventMsg<'a> {
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
    /// A `thread_rolled_back`'s turns dropped.
    #[serde(default, deserialize_with = "loose::count")]
    num_turns: Option<u64>,
    /// A `token_count`'s counts.
    #[serde(default, borrow)]
    info: Option<&'a RawValue>,
}

/// A `token_count` event's `info`.
#[derive(Deserialize)]
struct TokenInfo {
    #[serde(default)]
    last_token_usage: Option<TokenUsage>,
}

/// Codex's token counts of one response.
#[derive(Deserialize)]
struct TokenUsage {
    #[serde(default, deserialize_with = "loose::count")]
    input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "loose::count")]
    cached_input_tokens: Option<u64>,
    #[serde(default, deserialize_with = "loose::count")]
    output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "loose::count")]
    reasoning_output_tokens: Option<u64>,
    #[serde(default, deserialize_with = "loose::count")]
    total_tokens: Option<u64>,
}

/// A `compacted` line's payload.
#[derive(Deserialize)]
struct Compacted<'a> {
    #[serde(default, deserialize_with = "loose::string")]
    message: Option<String>,
    #[serde(default, borrow)]
    replacement_history: Option<&'a RawValue>,
}

/// Whether the line a replacement history's `item` converts to holds it
/// whole: a provider block (kept as written), or a message of text parts
/// only (`input_text`, an assistant's `output_text`) with no field the
/// message has no place for. Anything else (an item's `id`, its
/// `encrypted_content`, a reasoning item, a call) is not.
fn written_whole(item: &str) -> bool {
    // An item of the wrong shape (a key written twice) is converted as a map
    // reads it: not as written.
    if serde_json::from_str::<Item<'_>>(item).is_err() {
        return false;
    }
    let Ok(Value::Object(map)) = serde_json::from_str::<Value>(item) else {
        return false;
    };
    let text_only = |part: &str| {
        map.get("content")
            .and_then(Value::as_array)
            .is_some_and(|parts| {
                parts.iter().all(|p| {
                    p.as_object().is_some_and(|p| {
                        p.len() == 2
                            && p.get("type").and_then(Value::as_str) == Some(part)
                            && p.get("text").is_some_and(Value::is_string)
                    })
                })
            })
    };
    match map.get("type").and_then(Value::as_str) {
        Some("web_search_call" | "tool_search_call" | "compaction" | "compaction_summary") => true,
        Some("message") => {
            let part = match map.get("role").and_then(Value::as_str) {
                Some("user" | "developer" | "system") => "input_text",
                Some("assistant") => "output_text",
                _ => return false,
            };
            map.len() == 3 && text_only(part)
        }
        _ => false,
    }
}

/// `text` with `part` (a slice of it, such as a value read from it) replaced
/// by `with`; `None` when `part` is not a slice of `text`.
fn replaced(text: &str, part: &str, with: &str) -> Option<String> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    let slice = text.get(start..end)?;
    if !std::ptr::eq(slice.as_ptr(), part.as_ptr()) {
        return None;
    }
    Some([&text[..start], with, &text[end..]].concat())
}

/// A response item (a `response_item` line's payload): the fields its type
/// reads.
#[derive(Deserialize)]
struct Item<'a> {
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    role: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    id: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    call_id: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    name: Option<String>,
    /// A `function_call`'s arguments, a JSON text in a string.
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
    /// A `custom_tool_call`'s free-form input.
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
    /// A `local_shell_call`'s action.
    #[serde(default, borrow)]
    action: Option<&'a RawValue>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, borrow)]
    output: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "loose::string")]
    phase: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    execution: Option<String>,
}

impl Item<'_> {
    fn kind(&self) -> &str {
        self.kind.as_deref().unwrap_or("")
    }
}

/// A content part of a `message` item, or an output's content item.
#[derive(Deserialize)]
struct Part {
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    text: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    refusal: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    image_url: Option<String>,
}

impl Part {
    /// The part of `raw`, when it is an object.
    fn of(raw: &RawJson) -> Option<Self> {
        raw.is_object().then(|| loose::parse(raw.get())).flatten()
    }

    /// Its `image_url` as an image, when it is a base64 `data:` URL.
    fn data_image(&self) -> Option<ImageContent> {
        let (mime_type, data) = self
            .image_url
            .as_deref()?
            .strip_prefix("data:")?
            .split_once(";base64,")?;
        Some(ImageContent {
            source: MediaSource::Base64 {
                data: data.to_owned(),
                mime_type: mime_type.to_owned(),
            },
        })
    }
}

/// A tool's output written as an object.
#[derive(Deserialize)]
struct WireOutput<'a> {
    #[serde(default, borrow)]
    content_items: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "loose::string")]
    content: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    output: Option<String>,
    #[serde(default, deserialize_with = "loose::boolean")]
    success: Option<bool>,
}

/// The elements of a JSON array (none for anything else).
fn elements(raw: Option<&RawValue>) -> Option<Vec<RawJson>> {
    raw.filter(|r| r.get().starts_with('['))
        .and_then(|r| loose::parse(r.get()))
}

// ---------------------------------------------------------------------------
// The conversion.
// ---------------------------------------------------------------------------

/// Converts a Codex rollout read one line at a time (`lines`), writing the
/// transcript to `out` as it goes: only the lines after the last assistant
/// message still waiting for its usage are held back. The counts and
/// diagnostics are returned.
pub(super) fn import<'s>(
    lines: &dyn Fn(Reading) -> Result<LogLines<'s>, ImportError>,
    out: &mut dyn std::io::Write,
) -> Result<Imported, ImportError> {
    let mut imported = Imported::default();
    let mut rollout = Rollout::default();
    for line in lines(Reading::Entries)? {
        let mut line = line?;
        let Some(head) = line.head(|text| serde_json::from_str::<Head>(text).ok()) else {
            continue;
        };
        let wrong_types = if head.kind.as_deref() == Some("response_item") {
            loose::wrong_types(&line.text, RESPONSE_ITEM)
        } else {
            Vec::new()
        };
        for wrong in wrong_types {
            imported.warnings.push(ImportWarning::warning(
                line.number,
                WarningCode::BadValue,
                wrong,
            ));
        }
        rollout.entry(line.number, &line.text, head, &mut imported)?;
        let held = rollout
            .origin
            .awaiting_usage
            .as_ref()
            .map_or(imported.text.len(), |awaiting| awaiting.range.start);
        out.write_all(&imported.text[..held])?;
        imported.text.drain(..held);
        if let Some(awaiting) = &mut rollout.origin.awaiting_usage {
            awaiting.range = awaiting.range.start - held..awaiting.range.end - held;
        }
    }
    rollout.end(&mut imported)?;
    out.write_all(&imported.text)?;
    imported.text.clear();
    imported.said_if_empty("Codex");
    Ok(imported)
}

use loose::Kind::{Arr, Obj, Str};

/// A content part of a message, or an output's content item.
const PART: &[loose::Field] = &[
    ("type", Str),
    ("text", Str),
    ("refusal", Str),
    ("image_url", Str),
];

/// A `response_item` line, as far as the import reads it (fields that an
/// item type writes otherwise, such as a call's `arguments`, are read in
/// every form, so not checked).
const RESPONSE_ITEM: &[loose::Field] = &[
    ("type", Str),
    ("timestamp", Str),
    (
        "payload",
        Obj(&[
            ("type", Str),
            ("role", Str),
            ("id", Str),
            ("call_id", Str),
            ("name", Str),
            ("content", Arr(&Obj(PART))),
            ("encrypted_content", Str),
        ]),
    ),
];

/// The assistant message being built from one response's items.
struct OpenAssistant {
    message: AssistantMessage,
    /// The id of its line: its first item's.
    id: String,
}

/// The state of a rollout's conversion.
#[derive(Default)]
struct Rollout {
    /// Each call's tool name, by call id.
    names: HashMap<String, String>,
    /// The assistant message being built from one response's items.
    open: Option<OpenAssistant>,
    last_ts: u64,
    origin: Origin,
    /// The id of the last line written that has one.
    last_id: Option<String>,
    /// For each user turn of the history (as Codex counts them for a
    /// rollback), the id of the line before it (`None`: it starts the file).
    turns: Vec<Option<String>>,
    /// The line of the rollout being converted.
    line: usize,
    /// The calls with no output yet, in the order made.
    unanswered: Vec<String>,
    /// The calls a `turn_aborted` cut, with its line, waiting for what comes
    /// next: their output (the tool ended after all), or anything else.
    cut: Vec<CutCall>,
    /// The calls given the output `aborted`.
    aborted: HashSet<String>,
}

/// A rollout line that is no response item: the parts every kind is read by.
struct RolloutLine<'a> {
    /// The line whole (an `extension` line keeps it).
    text: &'a str,
    /// Its number in the rollout.
    number: usize,
    /// Its `type` (empty when it has none).
    kind: &'a str,
    /// Its `payload`.
    payload: Option<&'a RawValue>,
    /// Its time, as Unix milliseconds (the line before's when it has none).
    ts: u64,
}

impl RolloutLine<'_> {
    /// The id of the lines it writes: `codex:<line>`.
    fn id(&self) -> String {
        format!("codex:{}", self.number)
    }

    /// Its payload read as a `T`, when it is an object of that shape.
    fn payload<'a, T: Deserialize<'a>>(&'a self) -> Option<T> {
        self.payload
            .filter(|p| p.get().starts_with('{'))
            .and_then(|p| loose::parse(p.get()))
    }

    /// The event an `event_msg` line holds.
    fn event(&self) -> Option<EventMsg<'_>> {
        if self.kind != "event_msg" {
            return None;
        }
        self.payload()
    }
}

/// A response item to convert: its text, its fields, the id its lines take
/// and what an `extension` line keeps of it.
struct ItemAt<'a> {
    /// The item's text.
    text: &'a str,
    /// Its fields.
    item: Item<'a>,
    /// The id of the lines it writes.
    id: &'a str,
    /// Its time, as Unix milliseconds.
    ts: u64,
    /// What an `extension` line keeps of it: the rollout line, or the item.
    entry: &'a str,
}

impl Rollout {
    /// Converts one line: a response item, or a line of another kind.
    fn entry(
        &mut self,
        number: usize,
        text: &str,
        head: Head,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        self.line = number;
        let ts = head
            .timestamp
            .as_deref()
            .and_then(iso_millis)
            .unwrap_or(self.last_ts);
        self.last_ts = ts;
        let kind = head.kind.as_deref().unwrap_or("");
        let payload = head.payload.as_deref();
        let item_text = match (kind, payload) {
            ("response_item", Some(payload)) if payload.get().starts_with('{') => {
                Some(payload.get())
            }
            (k, _) if ITEM_TYPES.contains(&k) => Some(text),
            _ => None,
        };
        if let Some(item_text) = item_text {
            let id = format!("codex:{number}");
            return self.item_text(item_text, &id, ts, text, imported);
        }
        let line = RolloutLine {
            text,
            number,
            kind,
            payload,
            ts,
        };
        self.context(&line, imported)?;
        let event = line.event();
        let event_kind = event.as_ref().and_then(|e| e.kind.as_deref());
        let rollback = event.as_ref().and_then(|e| self.rollback(e));
        // Codex writes events between the items of one response: they do not
        // end its assistant message (their lines come before it).
        if kind != "event_msg" || rollback.is_some() {
            self.close(imported)?;
        }
        if event_kind == Some("turn_aborted") {
            self.turn_aborted(&line, imported)?;
        }
        if kind == "compacted" {
            return self.compacted(&line, imported);
        }
        if rollback.is_some() {
            self.fill_cut(ts, imported)?;
        }
        self.other(&line, rollback, imported)
    }

    /// What a line tells of the context the next messages are written in:
    /// the provider (`session_meta`), the model (`turn_context`), the usage
    /// of the last response (a `token_count` event).
    fn context(
        &mut self,
        line: &RolloutLine<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        match line.kind {
            "session_meta" => {
                if let Some(provider) = line.payload::<SessionMeta>().and_then(|m| m.model_provider)
                {
                    self.origin.provider = provider;
                }
            }
            "turn_context" => {
                if let Some(model) = line.payload::<TurnContext>().and_then(|c| c.model) {
                    self.origin.model = model;
                }
            }
            "event_msg" => {
                let usage = line
                    .event()
                    .filter(|e| e.kind.as_deref() == Some("token_count"))
                    .and_then(|e| e.info)
                    .filter(|i| i.get().starts_with('{'))
                    .and_then(|i| loose::parse::<TokenInfo>(i.get()))
                    .and_then(|i| i.last_token_usage)
                    .and_then(usage_of);
                if let Some(usage) = usage {
                    self.attach(usage, imported)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A rollback (Codex's backtrack, a `thread_rolled_back` event) drops the
    /// last `num_turns` user turns: what follows branches off before the
    /// first one dropped. The parent the event's line takes.
    fn rollback(&mut self, event: &EventMsg<'_>) -> Option<ParentId> {
        if event.kind.as_deref() != Some("thread_rolled_back") {
            return None;
        }
        let n = event
            .num_turns
            .filter(|&n| n > 0 && !self.turns.is_empty())?;
        let keep = self
            .turns
            .len()
            .saturating_sub(usize::try_from(n).unwrap_or(usize::MAX));
        let parent = self.turns[keep].clone();
        self.turns.truncate(keep);
        Some(parent.map_or(ParentId::Root, |p| ParentId::Id(MessageId::from(p))))
    }

    /// An interrupted turn (a `turn_aborted` event) leaves its running calls
    /// without output: they are cut (see [`Rollout::fill_cut`]).
    fn turn_aborted(
        &mut self,
        line: &RolloutLine<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        if self.unanswered.is_empty() {
            return Ok(());
        }
        self.close(imported)?;
        let cut = std::mem::take(&mut self.unanswered);
        self.cut.extend(cut.into_iter().map(|call| CutCall {
            call,
            line: line.number,
        }));
        Ok(())
    }

    /// A `compacted` line: Codex replaces the history. With a
    /// `replacement_history` (remote compaction) the line, kept whole, starts
    /// a new root and those items follow it; otherwise a `compactionSummary`
    /// line that keeps nothing before it.
    fn compacted(
        &mut self,
        line: &RolloutLine<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        self.fill_cut(line.ts, imported)?;
        // Its turns are gone (those of a replacement history are counted as
        // its items are read), and so are its calls.
        self.turns.clear();
        self.unanswered.clear();
        let id = line.id();
        let compacted = line.payload::<Compacted<'_>>();
        let history = compacted
            .as_ref()
            .and_then(|c| elements(c.replacement_history));
        let Some(history) = history else {
            let summary = compacted.and_then(|c| c.message).unwrap_or_default();
            let mut summary = crate::custom::AppMessage::new(CompactionSummary {
                summary,
                tokens_before: 0,
                first_kept_id: None,
                timestamp: line.ts,
                details: None,
            });
            summary.id = Some(MessageId::from(id.as_str()));
            push(imported, &AgentMessage::Custom(summary).to_line()?);
            imported.summaries += 1;
            self.last_id = Some(id);
            return Ok(());
        };
        // The items follow the line as the messages they are. Each one
        // those lines hold whole is a number in the line (its entry is
        // `codex:LINE/N`), so its text is written once; any other stays in
        // the line as written, so nothing of it is lost.
        let numbered: Vec<String> = history
            .iter()
            .enumerate()
            .map(|(i, item)| {
                if written_whole(item.get()) {
                    i.to_string()
                } else {
                    item.get().to_owned()
                }
            })
            .collect();
        let kept = compacted
            .as_ref()
            .and_then(|c| c.replacement_history)
            .zip(line.payload)
            .and_then(|(items, payload)| {
                let kept = replaced(
                    payload.get(),
                    items.get(),
                    &format!("[{}]", numbered.join(",")),
                )?;
                // The payload was read into a text of its own: where it is in
                // the line, when that is plain (it is there once).
                let mut at = line.text.match_indices(payload.get());
                let (start, found) = at.next().filter(|_| at.next().is_none())?;
                Some(
                    [
                        &line.text[..start],
                        &kept,
                        &line.text[start + found.len()..],
                    ]
                    .concat(),
                )
            });
        let root = extension_line(
            "codex.compacted",
            kept.as_deref().unwrap_or(line.text),
            Some(&MessageId::from(id.as_str())),
            &ParentId::Root,
        )?;
        push(imported, &root);
        imported.extensions += 1;
        self.last_id = Some(id);
        for (i, item) in history.iter().enumerate() {
            let id = format!("codex:{}/{i}", line.number);
            if item.is_object() {
                self.item_text(item.get(), &id, line.ts, item.get(), imported)?;
            } else {
                let kept = extension_line(
                    "codex.entry",
                    item.get(),
                    Some(&MessageId::from(id.as_str())),
                    &ParentId::Previous,
                )?;
                push(imported, &kept);
                imported.extensions += 1;
            }
        }
        self.close(imported)?;
        // A `token_count` after it counts a new response, not these.
        self.origin.awaiting_usage = None;
        Ok(())
    }

    /// Any other line: an `extension` line of kind `codex.<type>` holding it
    /// (a rollback's with its id and the parent it branches from).
    fn other(
        &mut self,
        line: &RolloutLine<'_>,
        rollback: Option<ParentId>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let name = if line.kind.is_empty() {
            "codex.entry".to_owned()
        } else {
            format!("codex.{}", line.kind)
        };
        let kept = match rollback {
            Some(parent) => {
                let id = line.id();
                let kept = extension_line(
                    &name,
                    line.text,
                    Some(&MessageId::from(id.as_str())),
                    &parent,
                )?;
                self.last_id = Some(id);
                kept
            }
            None => extension_line(&name, line.text, None, &ParentId::Previous)?,
        };
        push(imported, &kept);
        imported.extensions += 1;
        Ok(())
    }

    /// Gives each call an aborted turn cut the output `aborted`, as Codex
    /// does when it next sends the history (the output it fills in for a
    /// call that has none, right after the call), and says so.
    fn fill_cut(&mut self, ts: u64, imported: &mut Imported) -> Result<(), ImportError> {
        if self.cut.is_empty() {
            return Ok(());
        }
        self.close(imported)?;
        for (i, CutCall { call, line }) in std::mem::take(&mut self.cut).into_iter().enumerate() {
            let id = format!("codex:{line}/{i}");
            let result = ToolResultMessage {
                tool_name: self.names.get(&call).cloned().unwrap_or_default(),
                tool_call_id: call.clone(),
                content: vec![ToolResultContent::Text(TextContent::new("aborted"))],
                is_error: true,
                timestamp: ts,
                details: None,
            };
            push(
                imported,
                &message_line(
                    Message::ToolResult(result),
                    MessageId::from(id.as_str()),
                    ParentId::Previous,
                )?,
            );
            imported.messages += 1;
            imported.warnings.push(ImportWarning::warning(
                line,
                WarningCode::CallAborted,
                format!("the call `{call}` has no output when its turn is aborted; given the output `aborted`, as Codex sends it"),
            ));
            self.last_id = Some(id);
            self.aborted.insert(call);
        }
        Ok(())
    }

    /// Converts the response item `text` (a `response_item` line's payload,
    /// or an item of a compaction's `replacement_history`), whose lines get
    /// ids from `id`; `entry` is what an `extension` line keeps of it.
    fn item_text(
        &mut self,
        text: &str,
        id: &str,
        ts: u64,
        entry: &str,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        // An item of the wrong shape (a key written twice) is read as a map
        // reads it.
        let normalized;
        let text = match serde_json::from_str::<Item<'_>>(text) {
            Ok(_) => text,
            Err(_) => {
                let map: serde_json::Map<String, Value> = serde_json::from_str(text)?;
                normalized = serde_json::to_string(&map)?;
                &normalized
            }
        };
        let item: Item<'_> = serde_json::from_str(text)?;
        self.item(
            ItemAt {
                text,
                item,
                id,
                ts,
                entry,
            },
            imported,
        )
    }

    /// Converts one response item, by its type.
    fn item(&mut self, at: ItemAt<'_>, imported: &mut Imported) -> Result<(), ImportError> {
        let item = &at.item;
        let is_output = matches!(
            item.kind(),
            "function_call_output" | "custom_tool_call_output"
        );
        // What follows an aborted turn: a cut call's output is its result
        // (the tool ended after all); anything else first gives the calls
        // still cut the output `aborted`.
        let call = item.call_id.as_deref();
        if is_output && call.is_some_and(|c| self.cut.iter().any(|cut| cut.call == c)) {
            self.cut.retain(|cut| Some(cut.call.as_str()) != call);
        } else {
            self.fill_cut(at.ts, imported)?;
        }
        match (item.kind(), item.role.as_deref()) {
            ("message", Some("assistant")) => self.assistant_message(&at),
            ("reasoning", _) => self.reasoning(&at)?,
            // A search the provider ran itself (no call the client answers,
            // no result item), or a compaction's encrypted history (from a
            // remote compaction's `replacement_history`, which only the
            // Responses API reads): kept whole in a response, as the
            // Responses decoder keeps it, a provider block that a replay to
            // that API sends back in place.
            ("web_search_call" | "tool_search_call" | "compaction" | "compaction_summary", _) => {
                let block = provider_block(at.text)?;
                self.open_message(&at).content.push(block);
            }
            ("tool_search_output", _) if self.open.is_some() => {
                self.tool_search_output(&at, imported)?;
            }
            ("function_call" | "custom_tool_call" | "local_shell_call", _) => {
                self.call(&at, imported);
            }
            _ if is_output && call.is_some_and(|c| self.aborted.contains(c)) => {
                self.late_output(&at, imported)?;
            }
            _ if is_output => self.output(&at, imported)?,
            ("message", _) => self.message(&at, imported)?,
            _ => {
                self.close(imported)?;
                let kind = format!("codex.{}", item.kind());
                push(
                    imported,
                    &extension_line(&kind, at.entry, None, &ParentId::Previous)?,
                );
                imported.extensions += 1;
            }
        }
        // The response being built is the last line with an id (it is
        // written before any line that has one).
        if let Some(open) = &self.open {
            self.last_id = Some(open.id.clone());
        }
        Ok(())
    }

    /// The assistant message the model's items go into: the open one, else
    /// a new one whose line takes the item's id.
    fn open_message(&mut self, at: &ItemAt<'_>) -> &mut AssistantMessage {
        let origin = &mut self.origin;
        &mut self
            .open
            .get_or_insert_with(|| OpenAssistant {
                message: origin.assistant(at.ts),
                id: at.id.to_owned(),
            })
            .message
    }

    /// An assistant `message` item: its text and refusals, as text blocks.
    /// The item's phase (and id, when written) go in its first text block's
    /// signature, as the Responses codec keeps them.
    fn assistant_message(&mut self, at: &ItemAt<'_>) {
        let parts = elements(at.item.content).unwrap_or_default();
        let mut signature = message_signature(&at.item);
        let open = self.open_message(at);
        for part in parts {
            let text = Part::of(&part)
                .and_then(|p| p.text.or(p.refusal))
                .unwrap_or_else(|| part.get().to_owned());
            let mut text = TextContent::new(text);
            if let Some(signature) = signature.take() {
                text = text.with_signature(signature);
            }
            open.content.push(AssistantContent::Text(text));
        }
    }

    /// A `reasoning` item: the block the Responses codec makes of it.
    fn reasoning(&mut self, at: &ItemAt<'_>) -> Result<(), ImportError> {
        let item: Value = serde_json::from_str(at.text)?;
        let block = openai_responses::reasoning_block(&item);
        self.open_message(at).content.push(block);
        Ok(())
    }

    /// The tools a tool search found: the answer to its call, which the
    /// Responses API takes back only with that call, so a provider block of
    /// the same message, after it. A search the client ran ends the response
    /// (what follows is the next one).
    fn tool_search_output(
        &mut self,
        at: &ItemAt<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let block = provider_block(at.text)?;
        if let Some(open) = &mut self.open {
            open.message.content.push(block);
        }
        if at.item.execution.as_deref() != Some("server") {
            self.close(imported)?;
        }
        Ok(())
    }

    /// A `function_call`, `custom_tool_call` or `local_shell_call` item: a
    /// `toolCall` block whose arguments keep the order the model wrote them
    /// in (a custom tool's free-form input as `{"input": …}`, a shell call's
    /// action as `{"action": …}`).
    fn call(&mut self, at: &ItemAt<'_>, imported: &mut Imported) {
        let item = &at.item;
        let id = item
            .call_id
            .clone()
            .or_else(|| item.id.clone())
            .unwrap_or_default();
        let name = match item.kind() {
            "local_shell_call" => "local_shell".to_owned(),
            _ => item.name.clone().unwrap_or_default(),
        };
        let arguments = match item.kind() {
            "function_call" => function_arguments(item.arguments),
            "custom_tool_call" => wrapped("input", item.input.map_or("\"\"", RawValue::get)),
            _ => wrapped("action", item.action.map_or("null", RawValue::get)),
        };
        self.names.insert(id.clone(), name.clone());
        self.unanswered.push(id.clone());
        // The item's own id (`fc_…`, when the rollout has it) goes back with
        // the call, as the Responses decoder keeps it.
        let signature = item.id.clone().filter(|i| !i.is_empty() && *i != id);
        let call = ToolCall {
            signature,
            ..ToolCall::new(id.clone(), name, arguments)
        };
        let open = self.open_message(at);
        open.content.push(AssistantContent::ToolCall(call));
        open.stop_reason = StopReason::ToolUse;
        let unkept: Vec<String> = loose::keys(at.text)
            .into_iter()
            .filter(|k| !CALL_KEYS.contains(&k.as_str()))
            .collect();
        if !unkept.is_empty() {
            imported.warnings.push(ImportWarning::warning(
                self.line,
                WarningCode::FieldNotKept,
                format!(
                    "`{}` of the {} `{id}` not kept: a tool call has no place for it",
                    unkept.join("`, `"),
                    item.kind()
                ),
            ));
        }
    }

    /// The output of a call its aborted turn already answered (`aborted`): a
    /// second result would answer it twice, so it is an `extension` line.
    fn late_output(&mut self, at: &ItemAt<'_>, imported: &mut Imported) -> Result<(), ImportError> {
        self.close(imported)?;
        imported.warnings.push(ImportWarning::warning(
            self.line,
            WarningCode::LateOutput,
            format!(
                "the output of `{}` comes after its turn was aborted (answered `aborted`); kept as an extension line",
                at.item.call_id.as_deref().unwrap_or("")
            ),
        ));
        let kind = format!("codex.{}", at.item.kind());
        push(
            imported,
            &extension_line(&kind, at.entry, None, &ParentId::Previous)?,
        );
        imported.extensions += 1;
        Ok(())
    }

    /// A `function_call_output` or `custom_tool_call_output` item: a
    /// `toolResult` named after its call.
    fn output(&mut self, at: &ItemAt<'_>, imported: &mut Imported) -> Result<(), ImportError> {
        self.close(imported)?;
        let call = at.item.call_id.clone().unwrap_or_default();
        self.unanswered.retain(|c| *c != call);
        let ToolOutput {
            content,
            failed: is_error,
        } = output_of(at.item.output);
        let result = ToolResultMessage {
            tool_name: self.names.get(&call).cloned().unwrap_or_default(),
            tool_call_id: call,
            content,
            is_error,
            timestamp: at.ts,
            details: None,
        };
        push(
            imported,
            &message_line(
                Message::ToolResult(result),
                MessageId::from(at.id),
                ParentId::Previous,
            )?,
        );
        imported.messages += 1;
        self.last_id = Some(at.id.to_owned());
        Ok(())
    }

    /// A user, `developer` or `system` `message` item: a user message, or a
    /// system message for the two others.
    fn message(&mut self, at: &ItemAt<'_>, imported: &mut Imported) -> Result<(), ImportError> {
        self.close(imported)?;
        let parts = elements(at.item.content).unwrap_or_default();
        let message = match at.item.role.as_deref() {
            Some("developer" | "system") => Message::System(SystemMessage {
                content: parts.iter().map(text_part).collect(),
                timestamp: 0,
            }),
            _ => {
                if is_user_turn(&parts) {
                    self.turns.push(self.last_id.clone());
                }
                Message::User(UserMessage {
                    content: parts.iter().map(input_block).collect(),
                    timestamp: at.ts,
                })
            }
        };
        push(
            imported,
            &message_line(message, MessageId::from(at.id), ParentId::Previous)?,
        );
        imported.messages += 1;
        self.last_id = Some(at.id.to_owned());
        Ok(())
    }

    /// Writes the assistant message being built, if there is one.
    fn close(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        let Some(OpenAssistant { message, id }) = self.open.take() else {
            return Ok(());
        };
        let start = imported.text.len();
        if self.origin.open_has_usage {
            push(
                imported,
                &message_line(
                    Message::Assistant(message),
                    MessageId::from(id),
                    ParentId::Previous,
                )?,
            );
            self.origin.awaiting_usage = None;
        } else {
            push(
                imported,
                &message_line(
                    Message::Assistant(message.clone()),
                    MessageId::from(id.as_str()),
                    ParentId::Previous,
                )?,
            );
            self.origin.awaiting_usage = Some(AwaitingUsage {
                message,
                id,
                range: start..imported.text.len(),
            });
        }
        imported.messages += 1;
        Ok(())
    }

    /// Gives `usage` to the assistant message of the response it counts: the
    /// open one, else the last one written (its line is rewritten), unless
    /// that one has its usage already.
    fn attach(&mut self, usage: Usage, imported: &mut Imported) -> Result<(), ImportError> {
        if let Some(open) = &mut self.open {
            if !self.origin.open_has_usage {
                open.message.usage = usage;
                self.origin.open_has_usage = true;
            }
        } else if let Some(AwaitingUsage {
            mut message,
            id,
            range,
        }) = self.origin.awaiting_usage.take()
        {
            message.usage = usage;
            let mut text = message_line(
                Message::Assistant(message),
                MessageId::from(id),
                ParentId::Previous,
            )?
            .into_bytes();
            text.push(b'\n');
            imported.text.splice(range, text);
        }
        Ok(())
    }

    /// Ends the conversion: the message still open is written.
    fn end(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        self.fill_cut(self.last_ts, imported)?;
        self.close(imported)
    }
}

/// A call an aborted turn cut, with the line of the `turn_aborted`.
struct CutCall {
    call: String,
    line: usize,
}

/// An assistant message written before its usage is known: the message,
/// its line's id, and where the line is in the text written so far.
struct AwaitingUsage {
    message: AssistantMessage,
    id: String,
    range: std::ops::Range<usize>,
}

/// The model and provider the rollout last named, and the assistant message
/// still waiting for the usage of its response.
struct Origin {
    model: String,
    provider: String,
    /// The last assistant message written and where its line is in the text,
    /// while no `token_count` has given its usage.
    awaiting_usage: Option<AwaitingUsage>,
    /// Whether the open assistant message already has its usage.
    open_has_usage: bool,
}

impl Default for Origin {
    fn default() -> Self {
        Self {
            model: String::new(),
            provider: "openai".to_owned(),
            awaiting_usage: None,
            open_has_usage: false,
        }
    }
}

impl Origin {
    /// A new assistant message of the model and provider named last.
    fn assistant(&mut self, ts: u64) -> AssistantMessage {
        self.open_has_usage = false;
        AssistantMessage {
            content: Vec::new(),
            api: openai_responses::API.to_owned(),
            provider: self.provider.clone(),
            model: self.model.clone(),
            response_id: None,
            usage: Usage::default(),
            stop_reason: StopReason::Stop,
            error_message: None,
            timestamp: ts,
        }
    }
}

// ---------------------------------------------------------------------------
// Items and blocks.
// ---------------------------------------------------------------------------

/// Writes one line.
fn push(imported: &mut Imported, line: &str) {
    imported.text.extend_from_slice(line.as_bytes());
    imported.text.push(b'\n');
    imported.lines += 1;
}

/// An item agentmsg does not model, kept whole as the Responses decoder
/// keeps it: a `providerBlock` of the Responses API, in the order written.
fn provider_block(item: &str) -> Result<AssistantContent, ImportError> {
    Ok(AssistantContent::ProviderBlock(ProviderBlock::new(
        openai_responses::API,
        RawJson::from_json(item)?,
    )))
}

/// `{"<key>": <json>}`, `json` being one JSON value.
fn wrapped(key: &str, json: &str) -> ToolArguments {
    ToolArguments::from_json(&format!("{{\"{key}\":{json}}}")).unwrap_or_default()
}

/// A `function_call`'s arguments, the JSON text of an object in a string:
/// kept as written (keys in the model's order); any other JSON value as
/// `{"input": …}`, a text that is no JSON as `{"input": "<text>"}`; none as
/// `{}`.
fn function_arguments(arguments: Option<&RawValue>) -> ToolArguments {
    let Some(arguments) = arguments else {
        return ToolArguments::new();
    };
    if arguments.get().starts_with('{') {
        return ToolArguments::from_json(arguments.get()).unwrap_or_default();
    }
    let Some(text) = loose::parse::<String>(arguments.get()) else {
        return ToolArguments::new();
    };
    match RawJson::from_json(&text) {
        Ok(json) if json.is_object() => ToolArguments::from_json(json.get()).unwrap_or_default(),
        Ok(other) => wrapped("input", other.get()),
        Err(_) => wrapped("input", arguments.get()),
    }
}

/// Codex's token counts of one response as agentmsg usage: `input` without
/// the cached part, reasoning counted within `output` as OpenAI counts it.
fn usage_of(counts: TokenUsage) -> Option<Usage> {
    let input = counts.input_tokens?;
    let cached = counts.cached_input_tokens.unwrap_or(0);
    Some(Usage {
        input: input.saturating_sub(cached),
        output: counts.output_tokens.unwrap_or(0),
        reasoning: counts.reasoning_output_tokens.unwrap_or(0),
        cache_read: cached,
        cache_write: 0,
        cache_write_1h: 0,
        total_tokens: counts.total_tokens,
        cost: None,
    })
}

/// Whether a user `message` item (its content `parts`) starts a turn as
/// Codex counts turns for a rollback: not the context Codex writes as user
/// messages (AGENTS.md instructions, `<environment_context>` and other
/// tagged blocks).
fn is_user_turn(parts: &[RawJson]) -> bool {
    let first = parts.iter().find_map(|p| Part::of(p).and_then(|p| p.text));
    let text = first.as_deref().unwrap_or("").trim_start();
    let tagged = text.strip_prefix('<').is_some_and(|rest| {
        let name: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
            .collect();
        !name.is_empty() && rest[name.len()..].starts_with('>')
    });
    !tagged && !text.starts_with("# AGENTS.md instructions")
}

/// What a text block's signature keeps of an assistant `message` item for the
/// Responses codec (pi's `{"v":1,"id":…,"phase":…}`): its `phase`
/// (`commentary` or `final_answer`, which Codex sends back) and its id when
/// the rollout has one; `None` when it has neither.
fn message_signature(item: &Item<'_>) -> Option<String> {
    let id = item.id.as_deref().filter(|id| !id.is_empty());
    let phase = item.phase.as_deref().filter(|phase| !phase.is_empty());
    if id.is_none() && phase.is_none() {
        return None;
    }
    // Written by hand to keep pi's key order.
    let mut signature = String::from("{\"v\":1");
    for (key, value) in [("id", id), ("phase", phase)] {
        if let Some(value) = value {
            signature.push_str(&format!(",\"{key}\":{}", Value::from(value)));
        }
    }
    signature.push('}');
    Some(signature)
}

/// A content part as text: its `text`, else its JSON.
fn text_part(part: &RawJson) -> TextContent {
    TextContent::new(
        Part::of(part)
            .and_then(|p| p.text)
            .unwrap_or_else(|| part.get().to_owned()),
    )
}

/// A user `message` item's content part: an `input_image` with a `data:`
/// URL an image (any other URL its text), anything else its text.
fn input_block(part: &RawJson) -> UserContent {
    let Some(wire) = Part::of(part) else {
        return UserContent::Text(text_part(part));
    };
    if wire.kind.as_deref() != Some("input_image") {
        return UserContent::Text(text_part(part));
    }
    match wire.data_image() {
        Some(image) => UserContent::Image(image),
        None => UserContent::Text(TextContent::new(wire.image_url.unwrap_or_default())),
    }
}

/// What a tool's output is for a `toolResult`.
struct ToolOutput {
    content: Vec<ToolResultContent>,
    /// Whether the tool said it failed (`success: false`).
    failed: bool,
}

impl ToolOutput {
    fn of(content: Vec<ToolResultContent>) -> Self {
        Self {
            content,
            failed: false,
        }
    }
}

/// The content of a tool's output and whether it failed: Codex writes a
/// string, sometimes a JSON object with `output` and `metadata.exit_code`,
/// or content items.
fn output_of(output: Option<&RawValue>) -> ToolOutput {
    let Some(raw) = output else {
        return ToolOutput::of(Vec::new());
    };
    let text = raw.get();
    if text.starts_with('"') {
        let content = loose::parse::<String>(text)
            .map(|t| vec![ToolResultContent::Text(TextContent::new(t))])
            .unwrap_or_default();
        return ToolOutput::of(content);
    }
    if text.starts_with('[') {
        let blocks = elements(Some(raw)).unwrap_or_default();
        return ToolOutput::of(blocks.iter().map(output_block).collect());
    }
    let Some(wire) = text
        .starts_with('{')
        .then(|| loose::parse::<WireOutput<'_>>(text))
        .flatten()
    else {
        return ToolOutput::of(Vec::new());
    };
    let failed = wire.success == Some(false);
    if let Some(items) = wire.content_items.filter(|i| i.get().starts_with('[')) {
        return ToolOutput {
            content: output_of(Some(items)).content,
            failed,
        };
    }
    let text = wire
        .content
        .or(wire.output)
        .unwrap_or_else(|| text.to_owned());
    ToolOutput {
        content: vec![ToolResultContent::Text(TextContent::new(text))],
        failed,
    }
}

/// A content item of a tool's output (`input_text`, `input_image` with a
/// `data:` URL): text or an image; anything else its JSON as text.
fn output_block(block: &RawJson) -> ToolResultContent {
    let as_text = || ToolResultContent::Text(TextContent::new(block.get()));
    let Some(part) = Part::of(block) else {
        return as_text();
    };
    match (part.kind.as_deref(), &part.text, part.data_image()) {
        (Some("input_image"), _, Some(image)) => ToolResultContent::Image(image),
        (Some("input_text" | "output_text") | None, Some(text), _) => {
            ToolResultContent::Text(TextContent::new(text.clone()))
        }
        _ => as_text(),
    }
}
