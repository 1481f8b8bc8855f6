//! A Claude Code log (`~/.claude/projects/*/*.jsonl`): the
//! tree of `uuid`/`parentUuid` becomes `id`/`parentId`.
//!
//! - The pieces of one response (Claude Code writes one entry per content
//!   block, all with the same `message.id` and `requestId`) become one
//!   assistant message, whose id is the last entry's `uuid` (an earlier
//!   entry's `uuid` names it too), whatever Claude Code wrote between them
//!   as it ran each call on its arrival: the calls' results, hook
//!   attachments, progress and system entries, snapshots. Those are
//!   converted after the response, in the order written. The message has
//!   the response's usage (the last piece's, as ccusage counts it), once,
//!   and its stop reason: the one a piece says, else `toolUse` when it has
//!   calls (pieces written while the response streams say none). A piece
//!   that cannot join its response (a user's prompt came between) is a
//!   message without usage, and said (`split-response`).
//! - `text` (with its `citations`), `thinking` (with its `signature`),
//!   `redacted_thinking` and `tool_use` blocks become `text`, `thinking`,
//!   `redactedThinking` and `toolCall` blocks; each `tool_result` block of a user entry becomes a
//!   `toolResult` message (the tool's name from its call), other blocks of the
//!   entry a user message after them.
//! - Parallel calls: Claude Code gives each result entry its own call's entry
//!   as parent, so once the calls are merged into one response the results
//!   are siblings and all but one would be off the path to the leaf. The
//!   lines among one response's results (its result entries, and the progress
//!   and system entries written between them) follow each other in the order
//!   written, and what names any of them as parent follows the last
//!   (the `Results` of the conversion).
//! - An assistant entry with `isApiErrorMessage` (Claude Code's stand-in for
//!   a failed request) is an assistant message with stop reason `error`, its
//!   text (or the entry's `error`) as `errorMessage`: a failed turn, not sent.
//! - A `server_tool_use` block (a tool the API ran, such as web search), its
//!   result block and any other assistant block without an agentmsg form are
//!   `providerBlock`s of the Anthropic Messages API, as its decoder keeps
//!   them: replayed to Anthropic in place, never a call left unanswered.
//! - A `tool_result` block other than text and image (a ToolSearch's
//!   `tool_reference`s, a `document`) is kept as its JSON in text, which is
//!   said (agentmsg's tool results hold text and images).
//! - A `tool_use` field a tool call has no place for (a `caller` other than
//!   `direct`: a call a server tool's code made) is said as
//!   `field-not-kept`, not dropped in silence.
//! - An entry written twice (the same uuid and content, a known Claude Code
//!   slip) is read once, and said; one reusing a uuid with other content is
//!   kept as `<uuid>~<line>`, and said.
//! - A user's `image` and `document` blocks (base64 or URL sources) become
//!   agentmsg's `image` and `document` blocks.
//! - `isMeta` user entries (Claude Code's caveats and command output) are sent
//!   to the model as Claude Code sends them, so they are user messages too.
//! - A compaction (a `system` entry of subtype `compact_boundary`, written
//!   as a root, its `logicalParentUuid` naming what it follows, then a user
//!   entry with `isCompactSummary`, the summary Claude Code sends from then
//!   on) is a `compactionSummary` line of that summary, the boundary entry
//!   in its `details` (`claudeCode`), following the history it compacted:
//!   the session is one tree, and the context at a leaf after it starts at
//!   the summary (framed as agentmsg and pi frame a compaction's summary),
//!   then what follows. The summary's entry is an `extension` line. A
//!   boundary without a summary, or whose logical parent is no entry before
//!   it, starts a new root as written, and is said (`compact-boundary`);
//!   see `Compactions`.
//! - A compaction that keeps the last messages (its `compactMetadata` has
//!   `preservedMessages`, the kept entries, or a `preservedSegment`,
//!   `headUuid`…`tailUuid`, all written before the boundary, and
//!   `anchorUuid`, the summary or the boundary) is what Claude Code relinks
//!   when it loads the log: the kept messages then follow the anchor, so the
//!   context at the leaf is the summary and the kept messages, not the
//!   compacted history. The first kept message's lines (and those written
//!   after them up to the anchor) are held back and written after the
//!   anchor (`Preserved`).
//! - Sidechain entries (a subagent's conversation, `isSidechain`) are kept as
//!   messages of their own tree, written before the main conversation so the
//!   leaf is the main conversation's last entry. A file is converted in two
//!   passes, one line at a time (`import_path`): the sidechains' lines,
//!   then the main conversation's.
//! - A `queued_command` attachment (a prompt the user typed while Claude
//!   worked, which Claude Code sends to the model) is a user message of the
//!   prompt's text and images; the wrapper Claude Code puts around it (its
//!   text varies by version) is not reproduced, which is said. Other
//!   attachments are `extension` lines.
//! - `summary` entries (a title for the leaf they name) become label lines.
//! - Every other entry becomes an `extension` line of kind `claude.<type>`
//!   holding the entry verbatim (its keys in the order written), so nothing
//!   is lost.
//!
//! Each entry is read as typed fields: those every entry has (`type`,
//! `uuid`, `parentUuid`, `isSidechain`, `timestamp`), read in one walk of
//! the line with the fields most entries need and the check of the fields'
//! types (`Head`), then its type's own (one `#[derive(Deserialize)]` struct
//! per entry type), each converted by the function of its type. A field of another JSON type than the one
//! Claude Code writes is read as absent, never a reason to refuse the
//! entry, and said (`bad-value`, with the field's path). A line holding half
//! of a UTF-16 character is read with U+FFFD in its place, and said
//! (`lone-surrogate`). An entry naming itself as parent is a root, and said. The blocks of an assistant entry are read by the Anthropic
//! decoder, so a `tool_use`'s `input` keeps the order the model wrote it in
//! (at every depth); the lines are written by the runtime's writer, their
//! `id` and `parentId` by the envelope codec.

// The maps hold uuids and ids read from the log, looked up for every line:
// foldhash (seeded at random, as std's) costs less than SipHash here.
use foldhash::{HashMap, HashSet};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::detect::{self, LogLine, LogLines, Reading};
use super::{extension_line, iso_millis, loose, message_line};
use super::{ImportError, ImportWarning, Imported, WarningCode};
use crate::custom::CompactionSummary;
use crate::message::MediaSource;
use crate::message::RawJson;
use crate::providers::anthropic;
use crate::{AssistantContent, AssistantMessage, DocumentContent, ImageContent};
use crate::{Message, MessageId, ParentId, StopReason, TextContent, ToolArguments, ToolCall};
use crate::{ToolResultContent, ToolResultMessage, Usage, UserContent, UserMessage};

// ---------------------------------------------------------------------------
// The entries, typed: the fields every entry is read by, then each type's own.
// ---------------------------------------------------------------------------

/// The fields every Claude Code entry is read by, read with those of its
/// type that most entries need (an `assistant` entry's, a `user` entry's
/// `toolUseResult`): the line is read once for all of them. The fields of
/// other types are read from the same line by the function of that type.
#[derive(Default)]
struct Head {
    kind: Option<String>,
    uuid: Option<String>,
    parent_uuid: Option<String>,
    is_sidechain: bool,
    timestamp: Option<String>,
    subtype: Option<String>,
    /// Where its `message` is in the line (absent when `null`).
    message: Option<Span>,
    /// An `assistant` entry's own fields.
    is_api_error_message: bool,
    error: Option<String>,
    request_id: Option<String>,
    /// Where its `toolUseResult` is in the line (`null` too), unless that
    /// key is written twice (a `user` entry's fields then cannot be read).
    tool_use_result: Option<Span>,
    /// Whether `toolUseResult` is written twice.
    tool_use_result_twice: bool,
    /// The fields of another JSON type than Claude Code writes, each said
    /// (`loose::wrong_types`), when the head was read to check them.
    wrong: Vec<String>,
}

/// Where a value is in its line: `line[start..end]`.
#[derive(Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    /// Where `value`, read from `line`, is in it.
    fn of(line: &str, value: &RawValue) -> Self {
        let start = value.get().as_ptr() as usize - line.as_ptr() as usize;
        Self {
            start,
            end: start + value.get().len(),
        }
    }

    fn text(self, line: &str) -> &str {
        line.get(self.start..self.end).unwrap_or_default()
    }
}

impl Head {
    /// The head of the entry `line`, when the line can be read as one (a
    /// key of the head written twice cannot: [`LogLine::head`](super::detect::LogLine::head)
    /// then reads the object as a map reads it). With `check`, the fields
    /// of another JSON type than Claude Code writes are found as it is read
    /// ([`Head::wrong`]).
    fn read(line: &str, check: bool) -> Option<Self> {
        use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
        struct HeadVisitor<'l> {
            line: &'l str,
            check: bool,
        }
        /// A loose string field (`loose::string`).
        #[derive(Deserialize)]
        struct Str(#[serde(deserialize_with = "loose::string")] Option<String>);
        /// A loose flag (`loose::flag`).
        #[derive(Deserialize)]
        struct Flag(#[serde(deserialize_with = "loose::flag")] bool);
        impl<'de> Visitor<'de> for HeadVisitor<'_> {
            type Value = Head;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a Claude Code entry")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
                let mut head = Head::default();
                // The head's keys each read once, as a derived reading
                // refuses a key written twice.
                let mut seen = [false; HeadKey::COUNT];
                let mut found = Findings::default();
                while let Some(key) = map.next_key_seed(KeySeed)? {
                    let Key {
                        head: of_head,
                        table,
                    } = key;
                    let table = table.filter(|_| self.check);
                    let Some(key) = of_head else {
                        match table {
                            Some(at) => {
                                let value: &RawValue = map.next_value()?;
                                found.check(at, value.get());
                            }
                            None => {
                                map.next_value::<IgnoredAny>()?;
                            }
                        }
                        continue;
                    };
                    if key == HeadKey::ToolUseResult {
                        if head.tool_use_result.is_some() || head.tool_use_result_twice {
                            head.tool_use_result = None;
                            head.tool_use_result_twice = true;
                            map.next_value::<IgnoredAny>()?;
                        } else {
                            let value: &RawValue = map.next_value()?;
                            head.tool_use_result = Some(Span::of(self.line, value));
                        }
                        continue;
                    }
                    if std::mem::replace(&mut seen[key as usize], true) {
                        return Err(de::Error::duplicate_field(key.name()));
                    }
                    let value: &RawValue = map.next_value()?;
                    let text = value.get();
                    if let Some(at) = table {
                        found.check(at, text);
                    }
                    // Read from the value's text as the line's reading would
                    // read it (which fails where this fails).
                    let string = || {
                        serde_json::from_str::<Str>(text)
                            .map(|s| s.0)
                            .map_err(de::Error::custom)
                    };
                    let flag = || {
                        serde_json::from_str::<Flag>(text)
                            .map(|f| f.0)
                            .map_err(de::Error::custom)
                    };
                    match key {
                        HeadKey::Kind => head.kind = string()?,
                        HeadKey::Uuid => head.uuid = string()?,
                        HeadKey::ParentUuid => head.parent_uuid = string()?,
                        HeadKey::IsSidechain => head.is_sidechain = flag()?,
                        HeadKey::Timestamp => head.timestamp = string()?,
                        HeadKey::Subtype => head.subtype = string()?,
                        HeadKey::Message => {
                            head.message = (text != "null").then(|| Span::of(self.line, value));
                        }
                        HeadKey::IsApiErrorMessage => head.is_api_error_message = flag()?,
                        HeadKey::Error => head.error = string()?,
                        HeadKey::RequestId => head.request_id = string()?,
                        HeadKey::ToolUseResult => {}
                    }
                }
                head.wrong = found.said();
                Ok(head)
            }
        }
        let mut de = serde_json::Deserializer::from_str(line);
        let head = (&mut de)
            .deserialize_map(HeadVisitor { line, check })
            .ok()?;
        de.end().ok()?;
        Some(head)
    }
}

/// What the fields of [`ENTRY`] hold of another JSON type than Claude Code
/// writes, found as a line is read.
#[derive(Default)]
struct Findings {
    /// By the field's place in the table (a key written twice: its last
    /// value, as `loose::wrong_types` says it).
    said: Vec<(usize, Vec<String>)>,
    /// Whether a field could not be read (a number out of range): as
    /// `loose::wrong_types`, nothing is then said of the line.
    unreadable: bool,
}

impl Findings {
    /// Checks field `at` of the table, whose JSON text is `text`.
    fn check(&mut self, at: usize, text: &str) {
        let (name, kind) = &ENTRY[at];
        self.said.retain(|(field, _)| *field != at);
        match loose::wrong_type(text, name, kind) {
            Some(found) => self.said.push((at, found)),
            None => self.unreadable = true,
        }
    }

    /// What is said of the line, in the order of the table.
    fn said(mut self) -> Vec<String> {
        if self.unreadable {
            return Vec::new();
        }
        self.said.sort_by_key(|(field, _)| *field);
        self.said.into_iter().flat_map(|(_, found)| found).collect()
    }
}

/// A key of [`Head`].
#[derive(Clone, Copy, PartialEq, Eq)]
enum HeadKey {
    Kind,
    Uuid,
    ParentUuid,
    IsSidechain,
    Timestamp,
    Subtype,
    Message,
    IsApiErrorMessage,
    Error,
    RequestId,
    ToolUseResult,
}

impl HeadKey {
    const COUNT: usize = 11;
    const ALL: [(Self, &'static str); Self::COUNT] = [
        (Self::Kind, "type"),
        (Self::Uuid, "uuid"),
        (Self::ParentUuid, "parentUuid"),
        (Self::IsSidechain, "isSidechain"),
        (Self::Timestamp, "timestamp"),
        (Self::Subtype, "subtype"),
        (Self::Message, "message"),
        (Self::IsApiErrorMessage, "isApiErrorMessage"),
        (Self::Error, "error"),
        (Self::RequestId, "requestId"),
        (Self::ToolUseResult, "toolUseResult"),
    ];

    fn name(self) -> &'static str {
        Self::ALL[self as usize].1
    }
}

/// A key of an entry: the head's it is, and its place in [`ENTRY`], if any.
struct Key {
    head: Option<HeadKey>,
    table: Option<usize>,
}

/// Reads a key (without keeping it).
struct KeySeed;

impl<'de> serde::de::DeserializeSeed<'de> for KeySeed {
    type Value = Key;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }
}

impl<'de> serde::de::Visitor<'de> for KeySeed {
    type Value = Key;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a key")
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Key {
            head: HeadKey::ALL
                .iter()
                .find(|(_, name)| *name == key)
                .map(|(k, _)| *k),
            table: ENTRY.iter().position(|(name, _)| *name == key),
        })
    }
}

/// A `user` entry's own fields besides its message (the head's): read
/// once, when it is converted, whether it answers the open response or not.
struct UserFields {
    tool_use_result: Option<Value>,
    /// Its message's content, when its message is an object.
    content: Option<WireContent>,
}

/// One entry of the log.
struct Entry {
    /// Its line in the log.
    line: usize,
    /// Its text, which an `extension` line keeps verbatim.
    text: String,
    /// Its common fields (`uuid` and `parentUuid` as the conversion reads
    /// them: renamed when reused, relinked when a compaction kept it).
    head: Head,
    /// A `user` entry's own fields, when they can be read (read for the
    /// conversion, not by the reading of the heads).
    user: Option<UserFields>,
}

impl Entry {
    /// The entry on `line`, unless it is none (its fields cannot be read);
    /// its head alone.
    fn head_of(mut line: LogLine) -> Option<Self> {
        let head = line.head(|text| Head::read(text, false))?;
        Some(Self {
            line: line.number,
            text: line.text,
            head,
            user: None,
        })
    }

    /// The entry on `line` as it is converted: a `user` entry's own fields
    /// read too.
    fn of(mut line: LogLine, check: bool) -> Option<Self> {
        let head = line.head(|text| Head::read(text, check))?;
        let mut entry = Self {
            line: line.number,
            text: line.text,
            head,
            user: None,
        };
        if entry.kind() == "user" && entry.head.uuid.is_some() {
            entry.user = entry.read_user_fields();
        }
        Some(entry)
    }

    /// A `user` entry's fields besides its message, `None` when they cannot
    /// be read: its `toolUseResult` (any value, `null` too) read from where
    /// the head found it, as a reading of the whole line would read it.
    fn read_user_fields(&self) -> Option<UserFields> {
        /// A value nested at most this deep reads alone as it reads inside
        /// the line (whose object is one level more, of the 128 serde_json
        /// allows); a deeper one is read within the line.
        const SHALLOW: usize = 100;
        /// The whole line read for `toolUseResult` alone.
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct UserEntry {
            #[serde(default, deserialize_with = "loose::present")]
            tool_use_result: Option<Value>,
        }
        if self.head.tool_use_result_twice {
            return None;
        }
        let tool_use_result = match self.head.tool_use_result {
            None => None,
            Some(span) => match serde_json::from_str::<Value>(span.text(&self.text)) {
                Ok(value) if depth(&value) <= SHALLOW => Some(value),
                _ => loose::parse::<UserEntry>(&self.text)?.tool_use_result,
            },
        };
        let content = Entry::object::<WireUser<'_>>(self.message())
            .map(|message| WireContent::of(message.content));
        Some(UserFields {
            tool_use_result,
            content,
        })
    }

    /// Its `message` as written (absent when `null`).
    fn message(&self) -> Option<&str> {
        self.head.message.map(|span| span.text(&self.text))
    }

    fn kind(&self) -> &str {
        self.head.kind.as_deref().unwrap_or("")
    }

    /// The kind of the `extension` line that keeps it: `claude.<type>`.
    fn extension_kind(&self) -> String {
        match self.kind() {
            "" => "claude.entry".to_owned(),
            kind => format!("claude.{kind}"),
        }
    }

    /// Its `timestamp` as Unix milliseconds (0 when it has none).
    fn millis(&self) -> u64 {
        self.head
            .timestamp
            .as_deref()
            .and_then(iso_millis)
            .unwrap_or(0)
    }

    /// A field of the entry (its `message`, say) read as a `T`, when it is
    /// an object of that shape.
    fn object<'a, T: Deserialize<'a>>(field: Option<&'a str>) -> Option<T> {
        field
            .filter(|m| m.starts_with('{'))
            .and_then(|m| loose::parse(m))
    }
}

/// How deep arrays and objects nest in `value` (a scalar: 0).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(fields) => 1 + fields.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// The Messages API response (or the part of it) an `assistant` entry holds.
#[derive(Deserialize)]
struct WireResponse<'a> {
    #[serde(default, deserialize_with = "loose::string")]
    id: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    model: Option<String>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "loose::present")]
    usage: Option<Value>,
    #[serde(default, deserialize_with = "loose::string")]
    stop_reason: Option<String>,
}

/// The message a `user` entry holds.
#[derive(Deserialize)]
struct WireUser<'a> {
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
}

/// An `attachment` entry's own fields.
#[derive(Deserialize)]
struct AttachmentEntry<'a> {
    #[serde(default, borrow)]
    attachment: Option<&'a RawValue>,
}

/// An attachment: a `queued_command`'s prompt is read.
#[derive(Deserialize)]
struct Attachment<'a> {
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
    #[serde(default, borrow)]
    prompt: Option<&'a RawValue>,
}

/// A `summary` entry's own fields.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SummaryEntry<'a> {
    #[serde(default, deserialize_with = "loose::string")]
    leaf_uuid: Option<String>,
    #[serde(default, borrow)]
    summary: Option<&'a RawValue>,
}

/// A `system` entry's `compactMetadata`, the part a compaction that keeps
/// the last messages writes ([`Preserved`]).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SystemEntry<'a> {
    #[serde(default, borrow)]
    compact_metadata: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "loose::string")]
    logical_parent_uuid: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CompactMetadata<'a> {
    #[serde(default, borrow)]
    preserved_segment: Option<&'a RawValue>,
    #[serde(default, borrow)]
    preserved_messages: Option<&'a RawValue>,
    #[serde(default)]
    pre_tokens: Option<Value>,
}

/// A `user` entry as far as telling a compaction's summary: its
/// `isCompactSummary` and its message.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SummaryUserEntry<'a> {
    #[serde(default, deserialize_with = "loose::flag")]
    is_compact_summary: bool,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSegment {
    #[serde(default, deserialize_with = "loose::string")]
    head_uuid: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    anchor_uuid: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    tail_uuid: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireKept {
    #[serde(default, deserialize_with = "loose::string")]
    anchor_uuid: Option<String>,
    #[serde(default)]
    uuids: Option<Value>,
}

/// A content block's `type`.
#[derive(Deserialize)]
struct BlockHead {
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
}

impl BlockHead {
    fn of(block: &RawJson) -> Option<String> {
        if !block.is_object() {
            return None;
        }
        loose::parse::<BlockHead>(block.get()).and_then(|b| b.kind)
    }
}

/// A `tool_result` block.
#[derive(Deserialize)]
struct ToolResultBlock<'a> {
    #[serde(default, deserialize_with = "loose::string")]
    tool_use_id: Option<String>,
    #[serde(default, borrow)]
    content: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "loose::flag")]
    is_error: bool,
}

/// An `image` or `document` block.
#[derive(Deserialize)]
struct MediaBlock<'a> {
    #[serde(default, borrow)]
    source: Option<&'a RawValue>,
    #[serde(default, deserialize_with = "loose::string")]
    title: Option<String>,
}

/// The `source` of an `image` or `document` block.
#[derive(Deserialize)]
struct WireSource {
    #[serde(rename = "type", default, deserialize_with = "loose::string")]
    kind: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    data: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    media_type: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    url: Option<String>,
}

/// A `text` block of a user entry or a tool result.
#[derive(Deserialize)]
struct TextBlock {
    #[serde(default, deserialize_with = "loose::string")]
    text: Option<String>,
}

/// A `tool_use` block as far as the import reads it past the decoder: the
/// fields a call written oddly (no id, an input that is no object) keeps.
#[derive(Deserialize)]
struct LooseToolUse<'a> {
    #[serde(default, deserialize_with = "loose::string")]
    id: Option<String>,
    #[serde(default, deserialize_with = "loose::string")]
    name: Option<String>,
    #[serde(default, borrow)]
    input: Option<&'a RawValue>,
}

/// The content of a message: a string, or blocks.
enum WireContent {
    Text(String),
    Blocks(Vec<RawJson>),
    None,
}

impl WireContent {
    fn of(content: Option<&RawValue>) -> Self {
        let Some(content) = content else {
            return Self::None;
        };
        let text = content.get();
        if text.starts_with('"') {
            return loose::parse(text).map_or(Self::None, Self::Text);
        }
        if text.starts_with('[') {
            return loose::parse(text).map_or(Self::None, Self::Blocks);
        }
        Self::None
    }
}

// ---------------------------------------------------------------------------
// The JSON types Claude Code writes, each field of another type said.
// ---------------------------------------------------------------------------

use loose::Kind::{Any, Arr, Bool, Num, Obj, Str, StrOrArr};

/// An `image` or `document` block's `source`.
const SOURCE: &[loose::Field] = &[
    ("type", Str),
    ("data", Str),
    ("media_type", Str),
    ("url", Str),
];

/// A block of a tool result's content.
const RESULT_PART: &[loose::Field] = &[("type", Str), ("text", Str)];

/// A content block of a message.
const BLOCK: &[loose::Field] = &[
    ("type", Str),
    ("text", Str),
    ("thinking", Str),
    ("signature", Str),
    ("data", Str),
    ("id", Str),
    ("name", Str),
    ("input", Obj(&[])),
    ("tool_use_id", Str),
    ("is_error", Bool),
    ("content", StrOrArr(&Obj(RESULT_PART))),
    ("source", Obj(SOURCE)),
    ("title", Str),
    ("citations", Any),
];

/// A message's `usage`.
const USAGE: &[loose::Field] = &[
    ("input_tokens", Num),
    ("output_tokens", Num),
    ("cache_read_input_tokens", Num),
    ("cache_creation_input_tokens", Num),
    (
        "cache_creation",
        Obj(&[
            ("ephemeral_5m_input_tokens", Num),
            ("ephemeral_1h_input_tokens", Num),
        ]),
    ),
];

/// An entry, as far as the import reads it.
const ENTRY: &[loose::Field] = &[
    ("type", Str),
    ("uuid", Str),
    ("parentUuid", Str),
    ("logicalParentUuid", Str),
    ("isSidechain", Bool),
    ("timestamp", Str),
    ("sessionId", Str),
    ("requestId", Str),
    ("subtype", Str),
    ("isMeta", Bool),
    ("isApiErrorMessage", Bool),
    ("isCompactSummary", Bool),
    ("leafUuid", Str),
    ("summary", Str),
    (
        "message",
        Obj(&[
            ("id", Str),
            ("model", Str),
            ("role", Str),
            ("content", StrOrArr(&Obj(BLOCK))),
            ("usage", Obj(USAGE)),
            ("stop_reason", Str),
        ]),
    ),
    (
        "attachment",
        Obj(&[("type", Str), ("prompt", StrOrArr(&Obj(RESULT_PART)))]),
    ),
    (
        "compactMetadata",
        Obj(&[
            ("preTokens", Num),
            (
                "preservedSegment",
                Obj(&[("headUuid", Str), ("anchorUuid", Str), ("tailUuid", Str)]),
            ),
            (
                "preservedMessages",
                Obj(&[("anchorUuid", Str), ("uuids", Arr(&Str))]),
            ),
        ]),
    ),
];

// ---------------------------------------------------------------------------
// The lines written, in the order Claude Code reads the tree.
// ---------------------------------------------------------------------------

/// A line written: its text, and its id and parent (which the preserved
/// segments' reordering reads).
struct OutLine {
    text: String,
    id: Option<String>,
    parent: ParentId,
}

impl OutLine {
    fn message(message: Message, id: &str, parent: ParentId) -> Result<Self, ImportError> {
        Ok(Self {
            text: message_line(message, MessageId::from(id), parent.clone())?,
            id: Some(id.to_owned()),
            parent,
        })
    }

    fn extension(
        kind: &str,
        data: &str,
        id: Option<&str>,
        parent: ParentId,
    ) -> Result<Self, ImportError> {
        let message_id = id.map(MessageId::from);
        Ok(Self {
            text: extension_line(kind, data, message_id.as_ref(), &parent)?,
            id: id.map(str::to_owned),
            parent,
        })
    }

    fn parent_id(&self) -> Option<&str> {
        self.parent.id().map(MessageId::as_str)
    }
}

#[derive(Default)]
struct Out {
    main: Vec<String>,
    side: Vec<String>,
    /// The anchors of preserved segments not written yet: a main line naming
    /// one as parent (a relinked head) waits for it.
    anchors: HashSet<String>,
    /// The anchor waited for and the main lines held back until it is
    /// written.
    held: Option<Held>,
}

/// Main lines held back until the anchor of a preserved segment is written.
struct Held {
    /// The anchor waited for.
    anchor: String,
    /// The lines held back, in order.
    lines: Vec<OutLine>,
}

impl Out {
    fn push(&mut self, sidechain: bool, line: OutLine) {
        if sidechain {
            self.side.push(line.text);
            return;
        }
        if let Some(Held {
            anchor,
            lines: held,
        }) = &mut self.held
        {
            if line.id.as_deref() == Some(anchor.as_str()) {
                // What was written meanwhile and does not descend from the
                // head (the boundary, a rewound branch) goes before the
                // anchor; the head and what descends from it after.
                let mut moved = HashSet::from_iter([anchor.clone()]);
                let (mut before, mut after) = (Vec::new(), Vec::new());
                let mut last_moved = false;
                for held_line in held.drain(..) {
                    last_moved = match &held_line.parent {
                        ParentId::Id(parent) => moved.contains(parent.as_str()),
                        ParentId::Root => false,
                        // A line without parentId follows the one before.
                        ParentId::Previous => last_moved,
                    };
                    if last_moved {
                        if let Some(id) = &held_line.id {
                            moved.insert(id.clone());
                        }
                        after.push(held_line.text);
                    } else {
                        before.push(held_line.text);
                    }
                }
                self.anchors.remove(anchor.as_str());
                self.main.append(&mut before);
                self.main.push(line.text);
                self.main.append(&mut after);
                self.held = None;
            } else {
                held.push(line);
            }
            return;
        }
        if let Some(parent) = line.parent_id().filter(|p| self.anchors.contains(*p)) {
            self.held = Some(Held {
                anchor: parent.to_owned(),
                lines: vec![line],
            });
            return;
        }
        if let Some(id) = &line.id {
            self.anchors.remove(id);
        }
        self.main.push(line.text);
    }

    /// Writes the lines still held back (their anchor never came), which
    /// is said.
    fn finish(&mut self, imported: &mut Imported) {
        if let Some(Held {
            anchor,
            lines: held,
        }) = self.held.take()
        {
            imported.warnings.push(ImportWarning::warning(
                0,
                WarningCode::PreservedSegment,
                format!(
                    "the messages kept by a compaction wait for `{anchor}`, which was never written; written as they are"
                ),
            ));
            self.main.extend(held.into_iter().map(|h| h.text));
        }
    }
}

// ---------------------------------------------------------------------------
// Compactions that keep the last messages, read in a first pass.
// ---------------------------------------------------------------------------

/// Claude Code's compactions that keep the last messages. A
/// `compact_boundary`'s `compactMetadata` names the entry the kept messages
/// follow from then on (`anchorUuid`: the summary, or the boundary) and the
/// kept messages, written before the boundary with their first parents:
/// `preservedMessages.uuids` (in order; Claude Code 2.1 keeps a subset of
/// the segment, `allUuids`), or `preservedSegment`'s `headUuid`…`tailUuid`.
/// Claude Code relinks them as it loads the log (each kept message follows
/// the one before it, the first the anchor; or the head the anchor); so
/// does the import, when the anchor and the kept entries are in the log.
/// Read in a pass before the conversion (ids only).
#[derive(Default)]
struct Preserved {
    /// Each uuid seen, with its `parentUuid` (the first one written).
    parent: HashMap<String, Option<String>>,
    /// Each boundary's segment and kept messages.
    boundaries: Vec<Boundary>,
    /// Each `compact_boundary` of the main conversation, in order
    /// ([`Compactions`]).
    compactions: Vec<BoundarySeen>,
    /// The index in `compactions` of the last boundary of each uuid, which
    /// a summary names as parent.
    boundary_at: HashMap<String, usize>,
}

/// What one `compact_boundary` preserved.
struct Boundary {
    /// Its line in the log.
    line: usize,
    /// Its `preservedSegment`.
    segment: Option<Segment>,
    /// Its `preservedMessages`.
    kept: Option<Kept>,
}

/// A `compact_boundary` of the main conversation, as the first pass saw it.
struct BoundarySeen {
    line: usize,
    uuid: String,
    /// Whether it is a sidechain's (a subagent's).
    sidechain: bool,
    /// Its `logicalParentUuid`.
    logical: Option<String>,
    /// Whether an entry before it has the uuid `logical`.
    logical_known: bool,
    /// Whether an entry before it has its uuid.
    reused: bool,
    /// `compactMetadata.preTokens`.
    tokens_before: u64,
    /// The summary after it: its line and text.
    summary: Option<(usize, String)>,
}

/// Claude Code's compactions, made one tree. Claude Code writes a
/// compaction as a `compact_boundary` entry without a parent (its
/// `logicalParentUuid` names the entry it follows) and a user entry with
/// `isCompactSummary`, the summary it sends from then on, whose parent is
/// the boundary. The boundary becomes a `compactionSummary` line holding
/// that summary (and the entry itself in its `details`, `claudeCode`),
/// whose parent is the logical parent, so the compacted history stays on
/// the path while the context at a leaf after it starts at the summary; the
/// summary's entry becomes an `extension` line (the model sees the summary
/// once). When the compaction kept the last messages ([`Preserved`]) the
/// boundary follows the entry the first kept one followed, as the kept ones
/// follow the anchor. A boundary without a summary naming it, or whose
/// logical parent is no entry before it, starts a new root as written, and
/// is said. A sidechain's lines are written in the first pass: when it
/// meets a sidechain's boundary it takes them from the reading of the
/// entries' heads before it; a sidechain's compaction that keeps messages is left as
/// written (that pass does not relink them).
#[derive(Default, Clone)]
struct Compactions {
    /// The compactions, by the boundary's line.
    made: HashMap<usize, Compaction>,
    /// The lines of the summaries the compactions hold.
    summaries: HashSet<usize>,
    /// The boundaries left as written, by line, with why.
    not_made: HashMap<usize, String>,
}

/// A boundary read as a compaction.
#[derive(Clone)]
struct Compaction {
    /// The entry it follows (none: a root, where the first kept message was
    /// one).
    parent: Option<String>,
    summary: String,
    tokens_before: u64,
}

/// A `preservedSegment`: the kept entries from `head` to `tail`, which
/// follow `anchor` once relinked.
struct Segment {
    head: String,
    anchor: String,
    tail: String,
}

/// A `preservedMessages`: the kept entries, in order, the first following
/// `anchor` once relinked.
struct Kept {
    anchor: String,
    uuids: Vec<String>,
}

/// The entries to relink (uuid → the parent it takes) and the anchors the
/// first of them follow.
#[derive(Default)]
struct Relinks {
    parent: HashMap<String, String>,
    anchors: HashSet<String>,
    /// The first kept message of each boundary (by line) whose kept
    /// messages are relinked.
    first_kept: HashMap<usize, String>,
}

impl Preserved {
    fn see(&mut self, entry: &Entry) {
        let Some(uuid) = &entry.head.uuid else {
            return;
        };
        let reused = self.parent.contains_key(uuid);
        self.see_summary(entry);
        let parent = entry.head.parent_uuid.clone();
        match self.parent.get_mut(uuid) {
            Some(known @ None) => *known = parent,
            Some(Some(_)) => {}
            None => {
                self.parent.insert(uuid.clone(), parent);
            }
        }
        if !is_boundary(entry) {
            return;
        }
        let system = loose::parse::<SystemEntry<'_>>(&entry.text);
        let metadata = system.as_ref().and_then(|e| {
            Entry::object::<CompactMetadata<'_>>(e.compact_metadata.map(RawValue::get))
        });
        {
            let logical = system.as_ref().and_then(|e| e.logical_parent_uuid.clone());
            let logical_known = logical
                .as_ref()
                .is_some_and(|l| l != uuid && self.parent.contains_key(l));
            self.boundary_at
                .insert(uuid.clone(), self.compactions.len());
            self.compactions.push(BoundarySeen {
                line: entry.line,
                uuid: uuid.clone(),
                sidechain: entry.head.is_sidechain,
                logical,
                logical_known,
                reused,
                tokens_before: metadata
                    .as_ref()
                    .and_then(|m| m.pre_tokens.as_ref())
                    .and_then(Value::as_u64)
                    .unwrap_or(0),
                summary: None,
            });
        }
        let Some(metadata) = metadata else {
            return;
        };
        let segment = Entry::object::<WireSegment>(metadata.preserved_segment.map(RawValue::get))
            .and_then(|s| {
                Some(Segment {
                    head: s.head_uuid?,
                    anchor: s.anchor_uuid?,
                    tail: s.tail_uuid?,
                })
            });
        let kept = Entry::object::<WireKept>(metadata.preserved_messages.map(RawValue::get))
            .and_then(|m| {
                let anchor = m.anchor_uuid?;
                let uuids: Option<Vec<String>> = match m.uuids? {
                    Value::Array(uuids) => uuids
                        .into_iter()
                        .map(|u| match u {
                            Value::String(u) => Some(u),
                            _ => None,
                        })
                        .collect(),
                    _ => None,
                };
                Some(Kept {
                    anchor,
                    uuids: uuids?,
                })
            });
        if segment.is_some() || kept.is_some() {
            self.boundaries.push(Boundary {
                line: entry.line,
                segment,
                kept,
            });
        }
    }

    /// A main conversation's `user` entry with `isCompactSummary` naming a
    /// boundary as parent is that boundary's summary (the first one).
    fn see_summary(&mut self, entry: &Entry) {
        if entry.kind() != "user" {
            return;
        }
        let Some(&at) = entry
            .head
            .parent_uuid
            .as_ref()
            .and_then(|p| self.boundary_at.get(p))
        else {
            return;
        };
        let boundary = &self.compactions[at];
        if boundary.summary.is_some() || boundary.sidechain != entry.head.is_sidechain {
            return;
        }
        let Some(fields) = loose::parse::<SummaryUserEntry<'_>>(&entry.text) else {
            return;
        };
        if !fields.is_compact_summary {
            return;
        }
        let Some(message) = Entry::object::<WireUser<'_>>(fields.message.map(RawValue::get)) else {
            return;
        };
        let text = match WireContent::of(message.content) {
            WireContent::Text(text) => text,
            WireContent::Blocks(blocks) => blocks
                .iter()
                .filter(|b| BlockHead::of(b).as_deref() == Some("text"))
                .filter_map(|b| loose::parse::<TextBlock>(b.get()).and_then(|t| t.text))
                .collect::<Vec<_>>()
                .join("\n\n"),
            WireContent::None => String::new(),
        };
        if !text.is_empty() {
            self.compactions[at].summary = Some((entry.line, text));
        }
    }

    /// The compactions made one tree, and the boundaries left as written
    /// ([`Compactions`]), once `relinks` are known.
    fn compactions(&mut self, relinks: &Relinks) -> Compactions {
        let mut out = Compactions::default();
        // The parents the relinks and the compactions made so far give.
        let mut moved: HashMap<String, Option<String>> = HashMap::default();
        for seen in std::mem::take(&mut self.compactions) {
            let BoundarySeen {
                line,
                uuid,
                sidechain,
                logical,
                logical_known,
                reused,
                tokens_before,
                summary,
            } = seen;
            let why = match (&logical, &summary) {
                _ if reused => Some(format!("its uuid `{uuid}` is an earlier entry's")),
                (None, _) => Some("it has no `logicalParentUuid`".to_owned()),
                (Some(l), _) if !logical_known => Some(format!(
                    "its `logicalParentUuid` `{l}` names no entry before it"
                )),
                (_, None) => Some(
                    "no summary follows it (no `isCompactSummary` user entry names it as parent)"
                        .to_owned(),
                ),
                // A sidechain's lines are written in the first pass, where
                // kept messages are not relinked.
                _ if sidechain && relinks.first_kept.contains_key(&line) => {
                    Some("a sidechain's compaction that keeps messages".to_owned())
                }
                _ => None,
            };
            if let Some(why) = why {
                out.not_made.insert(line, why);
                continue;
            }
            let (Some(logical), Some((summary_line, summary))) = (logical, summary) else {
                continue;
            };
            // When its kept messages follow the summary, the boundary
            // follows what the first of them followed.
            let parent = match relinks.first_kept.get(&line) {
                Some(first) => self.parent.get(first).cloned().flatten(),
                None => Some(logical),
            };
            let parent_of = |u: &str| -> Option<String> {
                moved
                    .get(u)
                    .cloned()
                    .or_else(|| relinks.parent.get(u).cloned().map(Some))
                    .unwrap_or_else(|| self.parent.get(u).cloned().flatten())
            };
            let mut at = parent.clone();
            let mut looped = false;
            for _ in 0..=self.parent.len() {
                match at {
                    Some(u) if u == uuid => {
                        looped = true;
                        break;
                    }
                    Some(u) => at = parent_of(&u),
                    None => break,
                }
            }
            if looped {
                out.not_made.insert(
                    line,
                    format!(
                        "following `{}` would make the tree a loop",
                        parent.as_deref().unwrap_or_default()
                    ),
                );
                continue;
            }
            moved.insert(uuid, parent.clone());
            out.summaries.insert(summary_line);
            out.made.insert(
                line,
                Compaction {
                    parent,
                    summary,
                    tokens_before,
                },
            );
        }
        out
    }

    /// What to relink: the kept messages when all are in the log, else the
    /// segment's head when its tail leads back to it.
    fn relinks(&self) -> Relinks {
        let mut relinks = Relinks::default();
        // The anchor and its ancestors: a kept entry among them would make
        // the relinked tree a loop.
        let ancestry = |anchor: &str| -> HashSet<String> {
            let mut seen = HashSet::default();
            let mut at = Some(anchor.to_owned());
            while let Some(uuid) = at.filter(|u| seen.insert(u.clone())) {
                at = self.parent.get(&uuid).cloned().flatten();
            }
            seen
        };
        for Boundary {
            line,
            segment,
            kept,
        } in &self.boundaries
        {
            if let Some(Kept { anchor, uuids }) = kept {
                let above = ancestry(anchor);
                let whole = !uuids.is_empty()
                    && self.parent.contains_key(anchor)
                    && uuids
                        .iter()
                        .all(|u| self.parent.contains_key(u) && !above.contains(u));
                if whole {
                    let mut previous = anchor;
                    for uuid in uuids {
                        relinks.parent.insert(uuid.clone(), previous.clone());
                        previous = uuid;
                    }
                    relinks.anchors.insert(anchor.clone());
                    relinks.first_kept.insert(*line, uuids[0].clone());
                    continue;
                }
            }
            let Some(Segment { head, anchor, tail }) = segment else {
                continue;
            };
            let above = ancestry(anchor);
            if !self.parent.contains_key(anchor) || above.contains(head) {
                continue;
            }
            let mut at = tail.as_str();
            for _ in 0..=self.parent.len() {
                if at == anchor {
                    break;
                }
                if at == head {
                    relinks.parent.insert(head.clone(), anchor.clone());
                    relinks.anchors.insert(anchor.clone());
                    relinks.first_kept.insert(*line, head.clone());
                    break;
                }
                match self.parent.get(at) {
                    Some(Some(parent)) => at = parent,
                    _ => break,
                }
            }
        }
        relinks
    }
}

// ---------------------------------------------------------------------------
// The conversion.
// ---------------------------------------------------------------------------

/// Converts a Claude Code log read one line at a time (`lines` gives its
/// lines anew for each pass), writing the transcript to `out` as it goes, in
/// two passes: the sidechains' lines first, then the main conversation's.
/// The counts and diagnostics are returned.
pub(super) fn import<'s>(
    lines: &dyn Fn(Reading) -> Result<LogLines<'s>, ImportError>,
    out: &mut dyn std::io::Write,
) -> Result<Imported, ImportError> {
    // Both passes convert everything (so each line is what the whole read
    // makes of it); each writes its own lines, the second counts the rest.
    // The first is left out when no entry is a sidechain's (it would write
    // nothing): a reading of the entries' heads tells, and reads the
    // preserved segments the second pass relinks. That reading is left out
    // too when a look at the text of the lines finds no sidechain entry and
    // no compaction (it would find nothing).
    let mut imported = Imported::default();
    let mut written = 0;
    let mut has_sidechains = false;
    let (mut relinks, mut compactions) = (Relinks::default(), Compactions::default());
    if !plain_log(lines)? {
        let mut preserved = Preserved::default();
        for line in lines(Reading::Entries)? {
            if let Some(entry) = Entry::head_of(line?) {
                has_sidechains |= entry.head.is_sidechain;
                preserved.see(&entry);
            }
        }
        relinks = preserved.relinks();
        compactions = preserved.compactions(&relinks);
    }
    let mut scanned = false;
    for sidechains in [true, false] {
        if sidechains && !has_sidechains {
            continue;
        }
        imported = Imported::default();
        let mut log = Log {
            check_types: !sidechains,
            ..Log::default()
        };
        if !sidechains {
            log.compactions = std::mem::take(&mut compactions);
            log.relinked(std::mem::take(&mut relinks));
        }
        let mut write = |log: &mut Log| -> Result<(), ImportError> {
            let lines = if sidechains {
                &mut log.out.side
            } else {
                &mut log.out.main
            };
            for line in lines.drain(..) {
                out.write_all(line.as_bytes())?;
                out.write_all(b"\n")?;
                written += 1;
            }
            log.out.side.clear();
            log.out.main.clear();
            Ok(())
        };
        for line in lines(Reading::Lazily)? {
            let Some(entry) = Entry::of(line?, log.check_types) else {
                continue;
            };
            if sidechains && !scanned && entry.head.is_sidechain && is_boundary(&entry) {
                // A sidechain's compaction (a subagent's log) is written in
                // this pass: what the reading of the heads made of the
                // compactions tells its summary.
                scanned = true;
                log.compactions = compactions.clone();
            }
            log.line(entry, &mut imported)?;
            write(&mut log)?;
        }
        log.end(&mut imported)?;
        write(&mut log)?;
    }
    imported.lines = written;
    imported.said_if_empty("Claude Code");
    Ok(imported)
}

/// Whether no entry of the log is a sidechain's or a compaction's boundary
/// (whose reading then finds nothing), told from the text of its lines: an
/// entry is one only when its line holds `"isSidechain"` followed by
/// another value than `false`, or `compact_boundary`, or a `\u` escape
/// (which could write any of these). Only such lines are read as entries
/// (as [`Reading::Entries`] reads them).
fn plain_log<'s>(
    lines: &dyn Fn(Reading) -> Result<LogLines<'s>, ImportError>,
) -> Result<bool, ImportError> {
    const SIDECHAIN: &[u8] = b"\"isSidechain";
    let boundary = memchr::memmem::Finder::new(b"compact_boundary");
    let escape = memchr::memmem::Finder::new(b"\\u");
    let sidechain = memchr::memmem::Finder::new(SIDECHAIN);
    for line in lines(Reading::Raw)? {
        let line = line?;
        let text = line.text.as_bytes();
        let may_be = boundary.find(text).is_some()
            || escape.find(text).is_some()
            || sidechain
                .find_iter(text)
                .any(|at| !text[at + SIDECHAIN.len()..].starts_with(b"\":false"));
        if !may_be {
            continue;
        }
        let Some(Ok((text, _))) = detect::object_line(&line.text) else {
            continue;
        };
        let line = LogLine {
            number: line.number,
            text: text.into_owned(),
            unchecked: None,
        };
        if Entry::head_of(line).is_some_and(|e| e.head.is_sidechain || is_boundary(&e)) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether `entry` is a compaction's `compact_boundary`.
fn is_boundary(entry: &Entry) -> bool {
    entry.kind() == "system" && entry.head.subtype.as_deref() == Some("compact_boundary")
}

/// The state of a log's conversion.
#[derive(Default)]
struct Log {
    out: Out,
    /// uuid → the id of the line that stands for it (merged responses, split
    /// user entries).
    alias: Aliases,
    tool_names: HashMap<String, String>,
    /// The open assistant response.
    open: Option<OpenResponse>,
    /// The results of each response's calls, chained (see [`Results`]).
    results: Results,
    /// The message line each `extension` line with an id hangs from.
    anchor: HashMap<String, String>,
    /// Entries written between the pieces of the open response, in order:
    /// the results of its calls, progress, system and attachment entries
    /// naming it (or one of these) as parent, and entries without a place
    /// in the tree. They are converted after it, once it is whole.
    pending: Vec<Entry>,
    /// The uuids of `pending`: a next piece naming one as parent continues
    /// the response.
    pending_ids: HashSet<String>,
    /// The responses written (`message.id` and `requestId`): a later piece
    /// of one that could not join it carries no usage, so the response's
    /// usage counts once.
    written: HashSet<(String, String)>,
    /// Each uuid converted: the line of the log it was on, and a hash of its
    /// entry (not the entry: memory holds ids, never the file).
    seen: HashMap<String, Seen>,
    /// The entries a compaction kept, with the parent each takes
    /// ([`Preserved`]).
    relink: HashMap<String, String>,
    /// The compactions made one tree ([`Compactions`]; known in the
    /// second pass).
    compactions: Compactions,
    /// The line of the log being converted.
    at: usize,
    /// Whether fields of the wrong JSON type are said (in the pass whose
    /// warnings are kept).
    check_types: bool,
}

/// The assistant response being merged from its entries.
struct OpenResponse {
    /// The Messages API's id of the response (`message.id`).
    message_id: String,
    /// The entry's `requestId` (empty when none).
    request_id: String,
    /// Whether a piece said the stop reason (Claude Code writes pieces with
    /// `stop_reason: null` while the response streams).
    stop_said: bool,
    /// The message so far.
    message: AssistantMessage,
    /// The id of its line (the last entry's uuid).
    id: String,
    /// The parent of its line.
    parent: ParentId,
    /// Whether it is a sidechain's.
    sidechain: bool,
}

/// What a `user` entry says of all its messages.
struct UserSaid {
    /// Its `timestamp`, Unix milliseconds.
    timestamp: u64,
    /// Its `toolUseResult` (what Claude Code's tool returned), each result's
    /// `details`.
    details: Option<Value>,
}

/// The messages a `user` entry becomes, and the response whose calls they
/// answer.
struct UserLines {
    messages: Vec<Message>,
    results_of: Option<usize>,
}

/// What one `assistant` entry adds to a response.
struct ResponsePart {
    /// The entry's uuid.
    uuid: String,
    /// The Messages API's id of the response (`message.id`; empty when none).
    response_id: String,
    /// Its blocks.
    blocks: Vec<AssistantContent>,
    /// The response's usage so far, when the entry has it.
    usage: Option<Usage>,
    /// The response's stop reason, when the entry has one.
    stop: Option<StopReason>,
    /// The entry's `requestId` (empty when none).
    request_id: String,
}

/// A uuid converted: the line of the log it was on, and a hash of its entry.
struct Seen {
    line: usize,
    hash: u64,
}

/// The results of parallel tool calls. Claude Code gives each result entry
/// its call's entry as parent: the calls of one response are consecutive
/// entries (merged here into one line), so the results of all but the last
/// call hang off the path to the leaf, as siblings of the next call. Here the
/// results of one response follow each other, in the order written, and what
/// names one of them as parent follows the last.
#[derive(Default)]
struct Results {
    /// The alias group of the response line holding each call, by call id.
    call: HashMap<String, usize>,
    /// The last line among each response's results (by alias group); the
    /// response itself until one is written.
    tail: HashMap<usize, String>,
    /// The response (alias group) of each line among its results.
    of: HashMap<String, usize>,
    /// The responses (alias groups) that hold calls.
    with_calls: HashSet<usize>,
}

/// A hash of an entry's text (foldhash's quality hash: a repeated line is
/// told from a reused uuid by it, and SipHash over every whole line cost
/// more than reading the line's fields).
fn entry_hash(text: &str) -> u64 {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::default().hash_one(text)
}

/// Which line each `uuid` stands for: the uuids of one merged response share
/// a group, whose id moves to the response's last uuid in one step (however
/// many uuids the group holds).
#[derive(Default)]
struct Aliases {
    group: HashMap<String, usize>,
    ids: Vec<String>,
}

impl Aliases {
    /// The id of the line `uuid` stands for.
    fn get(&self, uuid: &str) -> Option<&str> {
        self.group.get(uuid).map(|&g| self.ids[g].as_str())
    }

    /// The line id a `parentUuid` stands for.
    fn resolve(&self, parent: Option<&str>) -> ParentId {
        match parent {
            Some(p) => ParentId::Id(MessageId::from(self.get(p).unwrap_or(p))),
            None => ParentId::Root,
        }
    }

    /// `uuid` stands for its own line.
    fn own(&mut self, uuid: &str) {
        self.group.insert(uuid.to_owned(), self.ids.len());
        self.ids.push(uuid.to_owned());
    }

    /// The line `old` stands for is now `uuid`'s: every uuid that stood for
    /// it stands for `uuid`.
    fn moved(&mut self, old: &str, uuid: &str) {
        match self.group.get(old) {
            Some(&g) => {
                self.ids[g] = uuid.to_owned();
                self.group.insert(uuid.to_owned(), g);
            }
            None => self.own(uuid),
        }
    }
}

/// Where an entry's first line goes: its parent, and the response among
/// whose results its lines go (see [`Log::placed`]).
struct Placement {
    parent: ParentId,
    joins: Option<usize>,
}

impl Log {
    /// The heads of preserved segments to relink to their anchors.
    fn relinked(&mut self, relinks: Relinks) {
        self.out.anchors = relinks.anchors;
        self.relink = relinks.parent;
    }

    /// The `parentId` of `entry`'s first line: the line its `parentUuid`
    /// stands for, or, when that line is a response with calls or a line
    /// after it among their results, the last of those lines. Also the
    /// response among whose results the entry's lines go: an entry holding
    /// results of `results_of`, or an `extension` line (a progress or system
    /// entry between a call and its result).
    fn placed(&self, entry: &Entry, results_of: Option<usize>, extension: bool) -> Placement {
        let parent = self.alias.resolve(entry.head.parent_uuid.as_deref());
        let unjoined = |parent| Placement {
            parent,
            joins: None,
        };
        let Some(id) = parent.id().map(|id| id.as_str().to_owned()) else {
            return unjoined(parent);
        };
        let anchor = self.anchor.get(&id).map_or(id.as_str(), String::as_str);
        let group = self.results.of.get(anchor).copied().or_else(|| {
            let &g = self.alias.group.get(anchor)?;
            let current = self.alias.ids.get(g).map(String::as_str) == Some(anchor);
            (current && self.results.with_calls.contains(&g)).then_some(g)
        });
        let Some(group) = group else {
            return unjoined(parent);
        };
        let joins = (extension || results_of == Some(group)).then_some(group);
        let tail = self
            .results
            .tail
            .get(&group)
            .or_else(|| self.alias.ids.get(group))
            .map_or(anchor, String::as_str);
        let parent = if tail == anchor {
            parent
        } else {
            ParentId::Id(MessageId::from(tail))
        };
        Placement { parent, joins }
    }

    /// Lines `ids` go among the results of response `group`, the last last.
    fn joined(&mut self, group: usize, ids: &[String]) {
        for id in ids {
            self.results.of.insert(id.clone(), group);
        }
        if let Some(last) = ids.last() {
            self.results.tail.insert(group, last.clone());
        }
    }

    /// Records the calls among `blocks` as the response `uuid` stands for.
    fn calls(&mut self, uuid: &str, blocks: &[AssistantContent]) {
        let Some(&group) = self.alias.group.get(uuid) else {
            return;
        };
        for block in blocks {
            if let AssistantContent::ToolCall(call) = block {
                self.results.call.insert(call.id.clone(), group);
                self.results.with_calls.insert(group);
            }
        }
    }

    /// Converts the entry on its line of the log. An entry whose uuid an
    /// earlier one has (Claude Code writes some entries twice) is left out
    /// when it is the same entry, and kept under the id `<uuid>~<line>`
    /// otherwise; either is said.
    fn line(&mut self, mut entry: Entry, imported: &mut Imported) -> Result<(), ImportError> {
        self.at = entry.line;
        let line = entry.line;
        if self.check_types {
            for wrong in std::mem::take(&mut entry.head.wrong) {
                imported
                    .warnings
                    .push(ImportWarning::warning(line, WarningCode::BadValue, wrong));
            }
        }
        if let Some(why) = self.compactions.not_made.remove(&line) {
            imported.warnings.push(ImportWarning::warning(
                line,
                WarningCode::CompactBoundary,
                format!("a compaction's boundary left as written, a root: {why}"),
            ));
        }
        let Some(uuid) = entry.head.uuid.clone() else {
            return self.entry(entry, imported);
        };
        if entry.head.parent_uuid.as_deref() == Some(uuid.as_str()) {
            // A loop of one, which no tree holds: a root, and said.
            imported.warnings.push(ImportWarning::warning(
                line,
                WarningCode::BadValue,
                format!("`parentUuid` of `{uuid}` names the entry itself; read as a root"),
            ));
            entry.head.parent_uuid = None;
        }
        let hash = entry_hash(&entry.text);
        match self.seen.get(&uuid) {
            None => {
                let relinked_to = self.relink.remove(&uuid);
                self.seen.insert(uuid, Seen { line, hash });
                // A message a compaction kept follows the anchor or the kept
                // message before it, as Claude Code relinks it.
                if let Some(parent) = relinked_to {
                    entry.head.parent_uuid = Some(parent);
                }
                // A compaction's boundary follows the history it compacted.
                if let Some(compaction) = self.compactions.made.get(&line) {
                    entry.head.parent_uuid = compaction.parent.clone();
                }
                self.entry(entry, imported)
            }
            Some(&Seen {
                line: first,
                hash: earlier,
            }) if earlier == hash => {
                imported.warnings.push(ImportWarning::warning(
                    line,
                    WarningCode::DuplicateEntry,
                    format!("entry `{uuid}` repeats line {first} exactly; left out"),
                ));
                Ok(())
            }
            Some(&Seen { line: first, .. }) => {
                let id = format!("{uuid}~{line}");
                imported.warnings.push(ImportWarning::warning(
                    line,
                    WarningCode::DuplicateUuid,
                    format!("entry `{uuid}` has the uuid of line {first}, not its content; kept as `{id}`"),
                ));
                entry.head.uuid = Some(id);
                self.entry(entry, imported)
            }
        }
    }

    /// Converts one entry, by its type.
    fn entry(&mut self, mut entry: Entry, imported: &mut Imported) -> Result<(), ImportError> {
        if entry.kind() == "assistant" && entry.head.uuid.is_some() {
            if let Some(message) = Entry::object::<WireResponse<'_>>(entry.message()) {
                return self.assistant(&entry, message, imported);
            }
        }
        if self.waits_for_open(&entry) {
            if let Some(uuid) = &entry.head.uuid {
                self.pending_ids.insert(uuid.clone());
            }
            self.pending.push(entry);
            return Ok(());
        }
        self.flush_open(imported)?;
        self.convert(&mut entry, imported)
    }

    /// Converts an entry other than a piece of a response, by its type.
    fn convert(&mut self, entry: &mut Entry, imported: &mut Imported) -> Result<(), ImportError> {
        if let Some(compaction) = self.compactions.made.remove(&entry.line) {
            return self.compaction(entry, compaction, imported);
        }
        if self.compactions.summaries.remove(&entry.line) {
            // The summary its compaction holds: sent there, kept here.
            return self.other(entry, imported);
        }
        match (entry.kind(), entry.head.uuid.is_some()) {
            ("user", true) => self.user(entry, imported),
            ("attachment", true) => self.attachment(entry, imported),
            ("summary", _) => self.summary(entry, imported),
            _ => self.other(entry, imported),
        }
    }

    /// An `assistant` entry: the open response when it continues it (Claude
    /// Code writes one entry per content block, all with the same
    /// `message.id`), else a new response, open until another entry ends it.
    fn assistant(
        &mut self,
        entry: &Entry,
        message: WireResponse<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let content = WireContent::of(message.content);
        unkept_call_fields(&content, self.at, imported);
        let blocks = assistant_blocks(content);
        for block in &blocks {
            if let AssistantContent::ToolCall(call) = block {
                self.tool_names.insert(call.id.clone(), call.name.clone());
            }
        }
        let part = ResponsePart {
            uuid: entry.head.uuid.clone().unwrap_or_default(),
            response_id: message.id.unwrap_or_default(),
            blocks,
            usage: message.usage.as_ref().map(usage_of),
            stop: message.stop_reason.as_deref().map(anthropic::stop_reason),
            request_id: entry.head.request_id.clone().unwrap_or_default(),
        };
        let Some(part) = self.continued(entry, part) else {
            return Ok(());
        };
        self.flush_open(imported)?;
        let key = (part.response_id.clone(), part.request_id.clone());
        let mut usage = part.usage.unwrap_or_default();
        if !key.0.is_empty() && self.written.contains(&key) {
            // A piece of a response already written that could not join it
            // (another entry than its results came between): its usage is
            // the response's, counted there.
            imported.warnings.push(ImportWarning::warning(
                self.at,
                WarningCode::SplitResponse,
                format!(
                    "a piece of response `{}` written apart from it; its usage is counted with the response's first message",
                    key.0
                ),
            ));
            usage = Usage::default();
        }
        let mut reply = AssistantMessage {
            content: part.blocks,
            api: anthropic::API.to_owned(),
            provider: anthropic::PROVIDER.to_owned(),
            model: message.model.unwrap_or_default(),
            response_id: Some(part.response_id.clone()).filter(|id| !id.is_empty()),
            usage,
            stop_reason: part.stop.unwrap_or(StopReason::Stop),
            error_message: None,
            timestamp: entry.millis(),
        };
        let mut stop_said = part.stop.is_some();
        if entry.head.is_api_error_message {
            failed_turn(&mut reply, entry.head.error.clone());
            stop_said = true;
        }
        let parent = self.placed(entry, None, false).parent;
        self.alias.own(&part.uuid);
        self.calls(&part.uuid, &reply.content);
        self.open = Some(OpenResponse {
            message_id: part.response_id,
            request_id: part.request_id,
            stop_said,
            message: reply,
            id: part.uuid,
            parent,
            sidechain: entry.head.is_sidechain,
        });
        Ok(())
    }

    /// Adds `part` to the open response when it continues it (the same
    /// `message.id`, following the response's last entry, on the same side);
    /// else gives it back.
    fn continued(&mut self, entry: &Entry, part: ResponsePart) -> Option<ResponsePart> {
        let Some(open) = &mut self.open else {
            return Some(part);
        };
        let follows = entry.head.parent_uuid.as_deref().is_some_and(|p| {
            self.alias.get(p) == Some(open.id.as_str()) || self.pending_ids.contains(p)
        });
        let same_request = open.request_id.is_empty()
            || part.request_id.is_empty()
            || open.request_id == part.request_id;
        if part.response_id.is_empty()
            || open.message_id != part.response_id
            || !same_request
            || !follows
            || open.sidechain != entry.head.is_sidechain
        {
            return Some(part);
        }
        let calls: Vec<AssistantContent> = part
            .blocks
            .iter()
            .filter(|b| matches!(b, AssistantContent::ToolCall(_)))
            .cloned()
            .collect();
        open.message.content.extend(part.blocks);
        let old = std::mem::replace(&mut open.id, part.uuid.clone());
        if let Some(usage) = part.usage {
            open.message.usage = usage;
        }
        if let Some(stop) = part.stop {
            open.message.stop_reason = stop;
            open.stop_said = true;
        }
        self.alias.moved(&old, &part.uuid);
        self.calls(&part.uuid, &calls);
        None
    }

    /// Whether `entry` waits for the open response, to be converted once
    /// it is whole: what Claude Code writes between the pieces of one
    /// response (it runs each call as its piece arrives) does not end it.
    /// That is an entry naming the response (or an entry waiting for it) as
    /// parent, on its side, which is the result of one of its calls or a
    /// progress, system or attachment entry (a hook run as a call starts);
    /// or an entry without a place in the tree (a snapshot of files, a
    /// mode). What names one of them as parent then follows the results.
    fn waits_for_open(&self, entry: &Entry) -> bool {
        let Some(open) = &self.open else {
            return false;
        };
        if entry.head.uuid.is_none() {
            return entry.kind() != "summary";
        }
        let follows = entry.head.parent_uuid.as_deref().is_some_and(|p| {
            self.alias.get(p) == Some(open.id.as_str()) || self.pending_ids.contains(p)
        });
        if !follows || open.sidechain != entry.head.is_sidechain {
            return false;
        }
        match entry.kind() {
            "assistant" | "summary" => false,
            "user" => self.answers_open(entry, open),
            _ => true,
        }
    }

    /// Whether the `user` entry holds only results of the open response's
    /// calls.
    fn answers_open(&self, entry: &Entry, open: &OpenResponse) -> bool {
        let Some(&group) = self.alias.group.get(&open.id) else {
            return false;
        };
        let Some(UserFields {
            content: Some(WireContent::Blocks(blocks)),
            ..
        }) = &entry.user
        else {
            return false;
        };
        !blocks.is_empty()
            && blocks.iter().all(|block| {
                BlockHead::of(block).as_deref() == Some("tool_result")
                    && loose::parse::<ToolResultBlock<'_>>(block.get())
                        .and_then(|r| r.tool_use_id)
                        .is_some_and(|call| self.results.call.get(&call) == Some(&group))
            })
    }

    /// A `user` entry: a `toolResult` message for each `tool_result` block,
    /// then a user message of its other blocks; an `extension` line when it
    /// has neither.
    fn user(&mut self, entry: &mut Entry, imported: &mut Imported) -> Result<(), ImportError> {
        let Some(UserFields {
            tool_use_result,
            content: Some(content),
        }) = entry.user.take()
        else {
            return self.other(entry, imported);
        };
        let said = UserSaid {
            timestamp: entry.millis(),
            details: tool_use_result,
        };
        let UserLines {
            messages,
            results_of,
        } = self.user_messages(&content, said, imported);
        if messages.is_empty() {
            return self.other(entry, imported);
        }
        let uuid = entry.head.uuid.clone().unwrap_or_default();
        let Placement {
            parent: mut previous,
            joins,
        } = self.placed(entry, results_of, false);
        let count = messages.len();
        for (i, message) in messages.into_iter().enumerate() {
            let id = if i + 1 == count {
                uuid.clone()
            } else {
                format!("{uuid}/{i}")
            };
            if let Some(group) = joins {
                self.joined(group, std::slice::from_ref(&id));
            }
            let line = OutLine::message(message, &id, previous)?;
            previous = ParentId::Id(MessageId::from(id.as_str()));
            imported.messages += 1;
            self.out.push(entry.head.is_sidechain, line);
        }
        self.alias.own(&uuid);
        Ok(())
    }

    /// The messages of a `user` entry's content: a `toolResult` for each
    /// `tool_result` block, then a user message of the other blocks; and
    /// the response whose calls the first known result answers.
    fn user_messages(
        &mut self,
        content: &WireContent,
        said: UserSaid,
        imported: &mut Imported,
    ) -> UserLines {
        let mut lines = UserLines {
            messages: Vec::new(),
            results_of: None,
        };
        let mut user_blocks = Vec::new();
        match content {
            WireContent::Text(text) => user_blocks.push(UserContent::Text(TextContent::new(text))),
            WireContent::Blocks(blocks) => {
                for block in blocks {
                    let result = match BlockHead::of(block).as_deref() {
                        Some("tool_result") => loose::parse::<ToolResultBlock<'_>>(block.get()),
                        Some("document") => {
                            user_blocks.push(media_block(block, Media::Document));
                            continue;
                        }
                        _ => None,
                    };
                    let Some(result) = result else {
                        user_blocks.push(text_or_image(block));
                        continue;
                    };
                    let call = result.tool_use_id.unwrap_or_default();
                    if lines.results_of.is_none() {
                        lines.results_of = self.results.call.get(&call).copied();
                    }
                    result_as_text(result.content, &call, self.at, imported);
                    lines.messages.push(Message::ToolResult(ToolResultMessage {
                        tool_name: self.tool_names.get(&call).cloned().unwrap_or_default(),
                        tool_call_id: call,
                        content: result_blocks(result.content),
                        is_error: result.is_error,
                        timestamp: said.timestamp,
                        details: said.details.clone(),
                    }));
                }
            }
            WireContent::None => {}
        }
        if !user_blocks.is_empty() {
            lines.messages.push(Message::User(UserMessage {
                content: user_blocks,
                timestamp: said.timestamp,
            }));
        }
        lines
    }

    /// An `attachment` entry: a prompt the user typed while Claude worked
    /// (Claude Code 2.x records it as a `queued_command` attachment, and
    /// sends it to the model as a user message) is a user message of the
    /// user's words; any other attachment an `extension` line.
    fn attachment(&mut self, entry: &Entry, imported: &mut Imported) -> Result<(), ImportError> {
        let Some(blocks) = queued_prompt(entry) else {
            return self.other(entry, imported);
        };
        let uuid = entry.head.uuid.clone().unwrap_or_default();
        let parent = self.placed(entry, None, false).parent;
        let message = Message::User(UserMessage {
            content: blocks,
            timestamp: entry.millis(),
        });
        imported.warnings.push(ImportWarning::warning(
            self.at,
            WarningCode::QueuedPrompt,
            format!("the prompt queued in `{uuid}` is a user message of the user's words; the wrapper Claude Code sends around them (its text varies by version) is not reproduced"),
        ));
        imported.messages += 1;
        let line = OutLine::message(message, &uuid, parent)?;
        self.out.push(entry.head.is_sidechain, line);
        self.alias.own(&uuid);
        Ok(())
    }

    /// A compaction's `compact_boundary` entry ([`Compactions`]): a
    /// `compactionSummary` line of its summary, the entry in its `details`
    /// (`claudeCode`), following the history it compacted.
    fn compaction(
        &mut self,
        entry: &Entry,
        compaction: Compaction,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let uuid = entry.head.uuid.clone().unwrap_or_default();
        let parent = self.placed(entry, None, false).parent;
        let boundary: Value = serde_json::from_str(&entry.text)?;
        let mut summary = crate::custom::AppMessage::new(CompactionSummary {
            summary: compaction.summary,
            tokens_before: compaction.tokens_before,
            first_kept_id: None,
            timestamp: entry.millis(),
            details: Some(serde_json::json!({ "claudeCode": boundary })),
        });
        summary.id = Some(MessageId::from(uuid.as_str()));
        summary.parent_id = parent.clone();
        let line = OutLine {
            text: crate::AgentMessage::Custom(summary).to_line()?,
            id: Some(uuid),
            parent,
        };
        self.out.push(entry.head.is_sidechain, line);
        imported.summaries += 1;
        Ok(())
    }

    /// A `summary` entry (a title for the leaf it names): a label line.
    fn summary(&mut self, entry: &Entry, imported: &mut Imported) -> Result<(), ImportError> {
        /// A `label` line's data.
        #[derive(serde::Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Label<'a> {
            target_id: &'a str,
            label: Option<&'a RawValue>,
        }
        let fields = loose::parse::<SummaryEntry<'_>>(&entry.text);
        let data = serde_json::to_string(&Label {
            target_id: fields
                .as_ref()
                .and_then(|f| f.leaf_uuid.as_deref())
                .unwrap_or(""),
            label: fields.as_ref().and_then(|f| f.summary),
        })?;
        let line = OutLine::extension("label", &data, None, ParentId::Previous)?;
        self.out.push(false, line);
        imported.extensions += 1;
        Ok(())
    }

    /// Any other entry: an `extension` line of kind `claude.<type>` holding
    /// it, in its place in the tree.
    fn other(&mut self, entry: &Entry, imported: &mut Imported) -> Result<(), ImportError> {
        self.extension(imported, &entry.extension_kind(), entry)
    }

    /// Ends the conversion: the response still open is written.
    fn end(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        self.flush_open(imported)?;
        self.out.finish(imported);
        Ok(())
    }

    /// Writes the open response, then the entries that waited for it.
    fn flush_open(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        if let Some(OpenResponse {
            mut message,
            id,
            parent,
            sidechain,
            message_id,
            request_id,
            stop_said,
        }) = self.open.take()
        {
            // No piece said why it stopped (each written while the response
            // streamed): a response with calls stops for them.
            if !stop_said && message.tool_calls().next().is_some() {
                message.stop_reason = StopReason::ToolUse;
            }
            if !message_id.is_empty() {
                self.written.insert((message_id, request_id));
            }
            let line = OutLine::message(Message::Assistant(message), &id, parent)?;
            self.out.push(sidechain, line);
            imported.messages += 1;
        }
        self.pending_ids.clear();
        let at = self.at;
        // Those without a place in the tree last: a line without a parent
        // follows the line before it, which must not be one among the
        // results.
        let (placed, unplaced): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.pending)
            .into_iter()
            .partition(|e| e.head.uuid.is_some());
        for mut entry in placed.into_iter().chain(unplaced) {
            self.at = entry.line;
            self.convert(&mut entry, imported)?;
        }
        self.at = at;
        Ok(())
    }

    /// Writes `entry` verbatim as an `extension` line of `kind`; one with a
    /// `uuid` keeps its place in the tree, and what hangs from it hangs from
    /// the message line it hangs from as far as results are concerned.
    fn extension(
        &mut self,
        imported: &mut Imported,
        kind: &str,
        entry: &Entry,
    ) -> Result<(), ImportError> {
        let line = match &entry.head.uuid {
            Some(uuid) => {
                let Placement { parent, joins } = self.placed(entry, None, true);
                if let Some(parent) = parent.id() {
                    let parent = parent.as_str();
                    let anchor = self.anchor.get(parent).cloned();
                    self.anchor
                        .insert(uuid.clone(), anchor.unwrap_or_else(|| parent.to_owned()));
                }
                if let Some(group) = joins {
                    self.joined(group, std::slice::from_ref(uuid));
                }
                OutLine::extension(kind, &entry.text, Some(uuid), parent)?
            }
            None => OutLine::extension(kind, &entry.text, None, ParentId::Previous)?,
        };
        self.out.push(entry.head.is_sidechain, line);
        imported.extensions += 1;
        Ok(())
    }
}

// ---------------------------------------------------------------------------
// Blocks.
// ---------------------------------------------------------------------------

/// Claude Code's stand-in for a failed request (an entry with
/// `isApiErrorMessage`, model `<synthetic>`): a failed turn, which is not
/// sent back; its error is the entry's `error`, else its text.
fn failed_turn(reply: &mut AssistantMessage, error: Option<String>) {
    let text = error.unwrap_or_else(|| reply.text_joined("\n"));
    reply.stop_reason = StopReason::Error;
    reply.error_message = Some(text);
}

/// A Claude Code message's `usage` (the Messages API's) as agentmsg usage.
fn usage_of(usage: &Value) -> Usage {
    let n = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (input, output) = (n("input_tokens"), n("output_tokens"));
    let (cache_read, cache_write) = (
        n("cache_read_input_tokens"),
        n("cache_creation_input_tokens"),
    );
    let cache_write_1h = usage
        .get("cache_creation")
        .and_then(|c| c.get("ephemeral_1h_input_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Usage {
        input,
        output,
        cache_read,
        cache_write,
        cache_write_1h,
        total_tokens: Some(
            input
                .saturating_add(output)
                .saturating_add(cache_read)
                .saturating_add(cache_write),
        ),
        ..Usage::default()
    }
}

/// The blocks of a `queued_command` attachment's prompt (a string, or text
/// and image blocks), when the entry is one.
fn queued_prompt(entry: &Entry) -> Option<Vec<UserContent>> {
    let fields = loose::parse::<AttachmentEntry<'_>>(&entry.text)?;
    let attachment = Entry::object::<Attachment<'_>>(fields.attachment.map(RawValue::get))?;
    if attachment.kind.as_deref() != Some("queued_command") {
        return None;
    }
    let blocks: Vec<UserContent> = match WireContent::of(attachment.prompt) {
        WireContent::Text(text) => vec![UserContent::Text(TextContent::new(text))],
        WireContent::Blocks(parts) => parts.iter().map(text_or_image).collect(),
        WireContent::None => return None,
    };
    (!blocks.is_empty()).then_some(blocks)
}

/// Which agentmsg block a media block of the Messages API becomes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Media {
    Image,
    Document,
}

/// An Anthropic `image` or `document` block as agentmsg's block: base64 data
/// with its media type, or a URL; anything else (a file id, a text source)
/// its JSON as text.
fn media_block(block: &RawJson, kind: Media) -> UserContent {
    let as_text = || UserContent::Text(TextContent::new(block.get()));
    let Some(media) = loose::parse::<MediaBlock<'_>>(block.get()) else {
        return as_text();
    };
    let Some(source) = Entry::object::<WireSource>(media.source.map(RawValue::get)) else {
        return as_text();
    };
    let source = match source.kind.as_deref() {
        Some("base64") => MediaSource::Base64 {
            data: source.data.unwrap_or_default(),
            mime_type: source.media_type.unwrap_or_else(|| {
                match kind {
                    Media::Image => "image/png",
                    Media::Document => "application/pdf",
                }
                .to_owned()
            }),
        },
        Some("url") if source.url.is_some() => MediaSource::Url(source.url.unwrap_or_default()),
        _ => return as_text(),
    };
    match kind {
        Media::Image => UserContent::Image(ImageContent { source }),
        Media::Document => UserContent::Document(DocumentContent {
            source,
            title: media.title,
        }),
    }
}

/// The blocks of an assistant entry, each read by the Anthropic decoder (so
/// a call's arguments keep the order the model wrote them in); a block the
/// decoder refuses (a call without an id, an input that is no object, a
/// block that is no object) keeps what it holds in the nearest form.
fn assistant_blocks(content: WireContent) -> Vec<AssistantContent> {
    match content {
        WireContent::Text(text) => vec![AssistantContent::Text(TextContent::new(text))],
        WireContent::Blocks(blocks) => blocks
            .into_iter()
            .enumerate()
            .map(|(i, block)| {
                anthropic::decode_block(block.clone(), None, &format!("content[{i}]"))
                    .unwrap_or_else(|_| odd_block(&block))
            })
            .collect(),
        WireContent::None => Vec::new(),
    }
}

/// A block the decoder refuses: a `tool_use` still a call (its id and name
/// empty when missing, an input that is no object kept as `{"input": …}`),
/// anything else its JSON as text.
fn odd_block(block: &RawJson) -> AssistantContent {
    let as_text = || AssistantContent::Text(TextContent::new(block.get()));
    if BlockHead::of(block).as_deref() != Some("tool_use") {
        return as_text();
    }
    let Some(call) = loose::parse::<LooseToolUse<'_>>(block.get()) else {
        return as_text();
    };
    let arguments = match call.input {
        None => ToolArguments::new(),
        Some(input) if input.get().starts_with('{') => {
            ToolArguments::from_json(input.get()).unwrap_or_default()
        }
        Some(other) => {
            ToolArguments::from_json(&format!("{{\"input\":{}}}", other.get())).unwrap_or_default()
        }
    };
    AssistantContent::ToolCall(ToolCall::new(
        call.id.unwrap_or_default(),
        call.name.unwrap_or_default(),
        arguments,
    ))
}

/// The fields of a `tool_use` block a tool call has no place for (as the
/// Anthropic decoder reads a call: id, name, input), said: a `caller` other
/// than `direct` (a call a server tool's code made), anything newer.
fn unkept_call_fields(content: &WireContent, line: usize, imported: &mut Imported) {
    let WireContent::Blocks(blocks) = content else {
        return;
    };
    for block in blocks {
        if BlockHead::of(block).as_deref() != Some("tool_use") {
            continue;
        }
        let fields = block.entries();
        let unkept: Vec<&str> = fields
            .iter()
            .filter(|(key, value)| match key.as_str() {
                "type" | "id" | "name" | "input" | "cache_control" => false,
                "caller" => BlockHead::of(value).as_deref() != Some("direct"),
                _ => true,
            })
            .map(|(key, _)| key.as_str())
            .collect();
        if !unkept.is_empty() {
            let id = fields
                .iter()
                .find(|(key, _)| key == "id")
                .and_then(|(_, id)| loose::parse::<String>(id.get()))
                .unwrap_or_default();
            imported.warnings.push(ImportWarning::warning(
                line,
                WarningCode::FieldNotKept,
                format!(
                    "`{}` of the tool_use `{id}` not kept: a tool call has no place for it",
                    unkept.join("`, `"),
                ),
            ));
        }
    }
}

/// Says the blocks of a tool result that a `toolResult` holds only as their
/// JSON in text (it holds text and images): a `tool_reference` (what Claude
/// Code's ToolSearch returns, the tools it loads), a `document`…
fn result_as_text(content: Option<&RawValue>, call: &str, line: usize, imported: &mut Imported) {
    let WireContent::Blocks(blocks) = WireContent::of(content) else {
        return;
    };
    let kinds: Vec<Option<String>> = blocks.iter().map(BlockHead::of).collect();
    let mut kinds: Vec<&str> = kinds
        .iter()
        .filter_map(|kind| match kind.as_deref() {
            Some("text" | "image") => None,
            other => Some(other.unwrap_or("(no type)")),
        })
        .collect();
    kinds.dedup();
    if !kinds.is_empty() {
        imported.warnings.push(ImportWarning::warning(
            line,
            WarningCode::ResultBlockAsText,
            format!(
                "the result of `{call}` has `{}` blocks, which a tool result holds only as their JSON in text; sent so",
                kinds.join("`, `")
            ),
        ));
    }
}

/// An Anthropic content block as agentmsg's text or image block; any other
/// its JSON as text.
fn text_or_image(block: &RawJson) -> UserContent {
    match BlockHead::of(block).as_deref() {
        Some("text") => UserContent::Text(TextContent::new(
            loose::parse::<TextBlock>(block.get())
                .and_then(|t| t.text)
                .unwrap_or_default(),
        )),
        Some("image") => media_block(block, Media::Image),
        _ => UserContent::Text(TextContent::new(block.get())),
    }
}

/// The content of a `tool_result` block: its text, or its text and image
/// blocks (any other block its JSON as text).
fn result_blocks(content: Option<&RawValue>) -> Vec<ToolResultContent> {
    let Some(raw) = content else {
        return Vec::new();
    };
    match WireContent::of(Some(raw)) {
        WireContent::Text(text) => vec![ToolResultContent::Text(TextContent::new(text))],
        WireContent::Blocks(blocks) => blocks
            .iter()
            .map(|block| match text_or_image(block) {
                UserContent::Image(image) => ToolResultContent::Image(image),
                UserContent::Text(text) => ToolResultContent::Text(text),
                _ => ToolResultContent::Text(TextContent::new(block.get())),
            })
            .collect(),
        WireContent::None => vec![ToolResultContent::Text(TextContent::new(raw.get()))],
    }
}

#[cfg(test)]
mod tests {
    use crate::import::{import, import_path, Imported, WarningCode};

    /// A Claude Code entry of `kind` on one line, `extra` written before
    /// its closing brace.
    fn entry(kind: &str, uuid: &str, parent: Option<&str>, message: &str, extra: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |p| format!("\"{p}\""));
        format!(
            r#"{{"parentUuid":{parent},"isSidechain":false,"sessionId":"s","type":"{kind}","message":{message},"uuid":"{uuid}","timestamp":"2025-01-01T00:00:00.000Z"{extra}}}"#
        )
    }

    /// A prompt, a reply calling `Read` (`c1`), its result (`extra` on its
    /// line) and a next prompt.
    fn log(result_extra: &str) -> String {
        [
            entry("user", "u0", None, r#"{"role":"user","content":"hi"}"#, ""),
            entry(
                "assistant",
                "a1",
                Some("u0"),
                r#"{"id":"m1","model":"claude-sonnet-4-5","role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Read","input":{"file_path":"a"}}],"usage":{"input_tokens":10,"output_tokens":5},"stop_reason":"tool_use"}"#,
                r#","requestId":"r1""#,
            ),
            entry(
                "user",
                "u2",
                Some("a1"),
                r#"{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"ok"}]}"#,
                result_extra,
            ),
            entry("user", "u3", Some("u2"), r#"{"role":"user","content":"next"}"#, ""),
        ]
        .join("\n")
    }

    /// What the tests look at in a line of the transcript (read without a
    /// limit of depth).
    #[derive(serde::Deserialize)]
    struct Line {
        role: Option<String>,
        kind: Option<String>,
        id: Option<String>,
        details: Option<Box<serde_json::value::RawValue>>,
    }

    fn lines(imported: &Imported) -> Vec<Line> {
        std::str::from_utf8(&imported.text)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// The line of the transcript with `id`.
    fn line<'a>(lines: &'a [Line], id: &str) -> &'a Line {
        lines.iter().find(|l| l.id.as_deref() == Some(id)).unwrap()
    }

    fn has(lines: &[Line], id: &str) -> bool {
        lines.iter().any(|l| l.id.as_deref() == Some(id))
    }

    /// A `toolUseResult` is read from its place in the line as the whole
    /// line's reading reads it: nested as deep as the line allows it is the
    /// result's details, one level deeper (which no reading of the line
    /// takes) or written twice keeps the entry verbatim.
    #[test]
    fn a_tool_use_result_reads_as_the_whole_line_reads_it() {
        let nested = |depth: usize| {
            format!(
                r#","toolUseResult":{}{}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            )
        };
        for (extra, result) in [
            (r#","toolUseResult":{"a":1}"#.to_owned(), true),
            (r#","toolUseResult":null"#.to_owned(), true),
            (nested(99), true),
            (nested(126), true),
            (nested(127), false),
            (
                r#","toolUseResult":{"a":1},"toolUseResult":{"b":2}"#.to_owned(),
                false,
            ),
        ] {
            let imported = import(log(&extra).as_bytes()).unwrap();
            let lines = lines(&imported);
            let u2 = line(&lines, "u2");
            if result {
                assert_eq!(u2.role.as_deref(), Some("toolResult"), "{extra:.60}");
                let details: serde_json::Value = match &u2.details {
                    Some(d) => serde_json::from_str(d.get()).unwrap(),
                    None => serde_json::Value::Null,
                };
                let written = extra.split_once(':').unwrap().1;
                let expected: serde_json::Value = serde_json::from_str(written).unwrap();
                assert_eq!(details, expected, "{extra:.60}");
            } else {
                assert_eq!(u2.role.as_deref(), Some("extension"), "{extra:.60}");
                assert_eq!(u2.kind.as_deref(), Some("claude.user"), "{extra:.60}");
            }
        }
    }

    /// A sidechain entry whose flag is spelled with an escape is still
    /// one: its line is written before the main conversation's (the look at
    /// the text that leaves the reading of the heads out reads such a line).
    #[test]
    fn a_sidechain_spelled_with_an_escape_is_one() {
        let side = entry("user", "s0", None, r#"{"role":"user","content":"sub"}"#, "")
            .replace(r#""isSidechain":false"#, r#""is\u0053idechain":true"#);
        let text = format!("{}\n{side}\n", log(""));
        let imported = import(text.as_bytes()).unwrap();
        let lines = lines(&imported);
        assert_eq!(lines[0].id.as_deref(), Some("s0"));
        assert_eq!(lines.len(), 5);
        // Without it, no reading of the heads: the order written.
        let plain = text.replace(r#""is\u0053idechain":true"#, r#""isSidechain":false"#);
        let imported = import(plain.as_bytes()).unwrap();
        assert_eq!(self::lines(&imported)[0].id.as_deref(), Some("u0"));
    }

    /// A line that is no JSON object among the converted ones is said once
    /// and left out, from a file as from memory, though the conversion
    /// does not check a line before reading it; a key of the head written
    /// twice is read as a map reads it (the last one).
    #[test]
    fn a_broken_line_is_said_once_and_a_repeated_key_read_last() {
        let mut text = log("");
        text.push_str("\n{\"parentUuid\":\"u3\",\"type\":\"user\",\"uuid\":\"u4\"");
        text.push('\n');
        text.push_str(&entry(
            "user",
            "u5",
            Some("u3"),
            r#"{"role":"user","content":"again"}"#,
            r#","uuid":"u6""#,
        ));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        std::fs::write(&path, &text).unwrap();
        let mut from_file = Vec::new();
        let filed = import_path(&path, &mut from_file).unwrap();
        let imported = import(text.as_bytes()).unwrap();
        assert_eq!(from_file, imported.text);
        for imported in [&filed, &imported] {
            let said: Vec<_> = imported
                .warnings
                .iter()
                .filter(|w| w.code == WarningCode::NotAnEntry)
                .map(|w| w.line)
                .collect();
            assert_eq!(said, [5]);
        }
        let lines = lines(&imported);
        assert!(has(&lines, "u6"));
        assert!(!has(&lines, "u4") && !has(&lines, "u5"));
    }
}
