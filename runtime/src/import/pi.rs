//! A pi coding-agent session file as an agentmsg transcript.
//!
//! pi writes one entry per line: `{"type":"message","message":{…}}`, a
//! `session` header, `model_change`, `thinking_level_change`, `compaction`,
//! `branch_summary`, `custom`, `label`… The mapping:
//!
//! - a `message` entry becomes its `message` object, byte for byte (agentmsg's
//!   format is a superset of pi's), with the entry's id added as `"id"`;
//! - a `compaction` entry becomes a `compactionSummary` line (`firstKeptId` is
//!   the id of the entry pi kept from), a `branch_summary` entry a
//!   `branchSummary` line; fields of theirs that these kinds do not hold
//!   (`details`, `fromHook`…) follow in an `extension` line of kind
//!   `pi.compaction` / `pi.branch_summary` whose id is `<entry id>/extra`;
//! - every other entry becomes an `extension` line of kind `pi.<type>` whose
//!   `data` is the entry, byte for byte;
//! - a line that is not a JSON object becomes an `extension` line of kind
//!   `pi.unparsed` whose `data` is the line as a string, and is reported.
//!
//! Ids: an entry's own `id` (pi sessions of version 2 and later) is kept; the
//! entries of a version 1 session get the ids the session reader gives them
//! when it migrates the file (`tree` and `context` show the same): the
//! entry's ordinal, the header not counted, as 8 hex digits. Any other entry
//! without an id (the header of a version 1 file) gets `<session id>:<entry
//! index>`, so the output is the same on every run.
//! A file whose first line is not a `session` header with a string id holds
//! no entry for pi (`loadEntriesFromFile`), so none is sent: every entry is
//! kept as an `extension` line of kind `pi.<type>`, and said so. A line that
//! holds several entries (a write that lost its newline) is converted entry
//! by entry, as the session reader reads it.
//! Not kept: the entry's own ISO `timestamp` on `message` entries (the message
//! has its own, in milliseconds). `parentId` is kept on every line of an entry
//! that has one (v2 and later), so a branched session stays a tree; a
//! `custom_message` entry becomes a `custom` line (sent as user content, as pi
//! sends it).

use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::detect::text_lines;
use super::{iso_millis, ImportError, ImportWarning, Imported, WarningCode};
use crate::custom::{BranchSummary, CompactionSummary};
use crate::transcript::codec::envelope::Envelope;
use crate::{AgentMessage, MessageId, ParentId};

/// The parts of a pi entry every mapping reads; the rest is read by the
/// function of its type, and kept through the line's text.
#[derive(Deserialize)]
struct EntryHead<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// One entry of the session, parsed.
struct PiEntry<'a> {
    /// Its line in the file.
    line: usize,
    /// Its text.
    raw: &'a str,
    /// Its fields.
    map: Map<String, Value>,
    /// The id its lines take.
    id: MessageId,
    /// Its `timestamp`, as Unix milliseconds, when it is an ISO time.
    timestamp: Option<u64>,
}

impl PiEntry<'_> {
    /// The id of a second line an entry writes (the fields its first line
    /// has no place for): `<id>/extra`.
    fn extra_id(&self) -> MessageId {
        MessageId::from(format!("{}/extra", self.id))
    }
}

/// An `extension` line's own fields; its envelope follows
/// ([`Envelope::append_to_object`]).
#[derive(Serialize)]
struct ExtensionLine<'a> {
    role: &'static str,
    kind: &'a str,
    data: &'a RawValue,
}

/// The `custom` line pi sends a `message` entry of role
/// `compactionSummary` as.
#[derive(Serialize)]
struct SummaryMessageLine<'a> {
    role: &'static str,
    #[serde(rename = "customType")]
    custom_type: &'static str,
    content: &'a str,
    display: bool,
    details: &'a Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<u64>,
}

fn string_field<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    map.get(key).and_then(Value::as_str)
}

fn string_field_of<'m>(value: &'m Value, key: &str) -> Option<&'m str> {
    value.get(key).and_then(Value::as_str)
}

/// The fields of `map` other than `known`, as a JSON object text, or `None`.
fn extras(map: &Map<String, Value>, known: &[&str]) -> Result<Option<String>, ImportError> {
    let rest: Map<String, Value> = map
        .iter()
        .filter(|(k, _)| !known.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if rest.is_empty() {
        Ok(None)
    } else {
        Ok(Some(serde_json::to_string(&Value::Object(rest))?))
    }
}

/// The keys of an entry that every mapping accounts for: `type`, `id` when it
/// is a string (it becomes the line's id) and `parentId` (the line's parent).
/// Adds to `known` each key whose field was carried into the line.
fn carried<const N: usize>(known: &mut Vec<&'static str>, fields: [(&'static str, bool); N]) {
    known.extend(
        fields
            .into_iter()
            .filter_map(|(key, carried)| carried.then_some(key)),
    );
}

fn base_known(map: &Map<String, Value>) -> Vec<&'static str> {
    let mut known = vec!["type", "parentId"];
    if string_field(map, "id").is_some() {
        known.push("id");
    }
    known
}

/// Converts the text of a pi session file.
pub(crate) fn import(text: &str) -> Result<Imported, ImportError> {
    let lines = || {
        crate::lines::raw_lines(text.as_bytes()).filter_map(|line| {
            let raw = text.get(line.start..line.start + line.bytes.len())?;
            Some((line.number, raw.strip_suffix('\r').unwrap_or(raw)))
        })
    };
    let mut pi = PiImport::new(lines());
    let mut imported = Imported::default();
    for (line, raw) in lines() {
        pi.entry(line, raw, &mut imported)?;
    }
    Ok(imported)
}

/// Converts the pi session file at `path`, writing the transcript to `out`
/// as it goes: the file is read twice, one line at a time (the first pass
/// finds the session's id and every entry's), so memory holds a line and the
/// ids, never the file. The counts and diagnostics are returned; the text is
/// in `out`.
pub(crate) fn import_file(path: &Path, out: &mut dyn Write) -> Result<Imported, ImportError> {
    let read_error = ImportError::Read;
    let lines = || -> Result<_, ImportError> {
        let file = std::fs::File::open(path).map_err(read_error)?;
        Ok(text_lines(std::io::BufReader::with_capacity(1 << 16, file)))
    };
    let mut scan = Scan::default();
    for line in lines()? {
        let (_, raw, _) = line.map_err(read_error)?;
        PiImport::scan(&raw, &mut scan);
    }
    let mut pi = PiImport::with_ids(scan);
    let mut imported = Imported::default();
    let mut lossy = false;
    for line in lines()? {
        let (number, raw, replaced) = line.map_err(read_error)?;
        lossy |= replaced;
        pi.entry(number, &raw, &mut imported)?;
        out.write_all(&imported.text)?;
        imported.text.clear();
    }
    imported.lossy = lossy;
    Ok(imported)
}

/// The `type` and `id` of an entry, read as a [`Map`] would read the object
/// (the last of a repeated key wins; anything but an object is refused).
struct IdHead {
    kind: Option<Value>,
    id: Option<Value>,
    version: Option<Value>,
}

impl<'de> Deserialize<'de> for IdHead {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = IdHead;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<IdHead, A::Error> {
                let mut head = IdHead {
                    kind: None,
                    id: None,
                    version: None,
                };
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    match key.as_ref() {
                        "type" => head.kind = Some(map.next_value()?),
                        "id" => head.id = Some(map.next_value()?),
                        "version" => head.version = Some(map.next_value()?),
                        _ => {
                            map.next_value::<serde::de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(head)
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// The state of a pi import: the session's id and version, every entry's id,
/// and how many entries were converted.
struct PiImport {
    /// Each parsed entry's own id (`None` for the header and an entry
    /// without one).
    ids: Vec<Option<String>>,
    /// Each parsed entry's ordinal among the entries, the header not
    /// counted (`None` for the header).
    ordinals: Vec<Option<usize>>,
    session_id: String,
    /// The header's version (1 when it names none).
    version: u32,
    index: usize,
    /// Whether the file starts with a `session` header: pi reads no entry of
    /// a file that does not (`loadEntriesFromFile`), so none is sent.
    headed: bool,
    said_headless: bool,
    /// The parent the next line written takes: the entry's `parentId` for
    /// its first line (v2 and later; a v1 session is linear).
    parent: ParentId,
}

/// What the first pass learns.
#[derive(Default)]
struct Scan {
    ids: Vec<Option<String>>,
    headers: Vec<bool>,
    session_id: Option<String>,
    version: Option<u32>,
    /// Whether the first JSON line is a `session` header with a string id
    /// (`None` before any): pi reads no entry of a file whose first is not.
    headed: Option<bool>,
}

impl PiImport {
    /// The state for the lines of a whole file.
    fn new<'a>(lines: impl Iterator<Item = (usize, &'a str)>) -> Self {
        let mut scan = Scan::default();
        for (_, raw) in lines {
            Self::scan(raw, &mut scan);
        }
        Self::with_ids(scan)
    }

    /// The first pass over one line: its entry's own id, and the session's id
    /// if it is the header. A line counts as an entry when it is a JSON
    /// object, as the conversion reads it.
    fn scan(raw: &str, scan: &mut Scan) {
        if raw.trim().is_empty() {
            return;
        }
        let Ok(IdHead { kind, id, version }) = serde_json::from_str::<IdHead>(raw) else {
            // Entries that lost the newline between them are read each, as
            // the conversion reads them.
            if let Some(parts) = joined(raw) {
                for part in parts {
                    Self::scan(part, scan);
                }
            } else if scan.headed.is_none()
                && serde_json::from_str::<serde::de::IgnoredAny>(raw).is_ok()
            {
                scan.headed = Some(false);
            }
            return;
        };
        let is_header = kind.as_ref().and_then(Value::as_str) == Some("session");
        scan.headed
            .get_or_insert(is_header && id.as_ref().is_some_and(Value::is_string));
        let id = id.as_ref().and_then(Value::as_str).map(str::to_owned);
        if is_header && scan.session_id.is_none() {
            scan.session_id = Some(id.clone().unwrap_or_else(|| "pi".to_owned()));
            scan.version = Some(
                version
                    .as_ref()
                    .and_then(Value::as_u64)
                    .and_then(|v| u32::try_from(v).ok())
                    .unwrap_or(1),
            );
        }
        // pi counts `firstKeptEntryIndex` over the parsed entries, the header included.
        scan.ids.push(id.filter(|_| !is_header));
        scan.headers.push(is_header);
    }

    fn with_ids(scan: Scan) -> Self {
        let mut ordinal = 0;
        let ordinals = scan
            .headers
            .iter()
            .map(|&header| {
                (!header).then(|| {
                    ordinal += 1;
                    ordinal
                })
            })
            .collect();
        Self {
            ids: scan.ids,
            ordinals,
            session_id: scan.session_id.unwrap_or_else(|| "pi".to_owned()),
            version: scan.version.unwrap_or(1),
            index: 0,
            headed: scan.headed.unwrap_or(false),
            said_headless: false,
            parent: ParentId::Previous,
        }
    }

    /// The id of parsed entry `index`. In a version 1 session (no ids in the
    /// file) it is the one [`Session`](crate::Session) gives when
    /// it migrates the file as pi does, so that `import`, `tree` and
    /// `context` name entries alike: the entry's ordinal among the entries,
    /// the header not counted, as 8 hex digits.
    fn id(&self, index: usize) -> Option<String> {
        if let (true, Some(ordinal)) = (self.version < 2, self.ordinals.get(index)?) {
            return Some(format!("{ordinal:08x}"));
        }
        match self.ids.get(index)? {
            Some(id) => Some(id.clone()),
            None => Some(format!("{}:{index}", self.session_id)),
        }
    }

    /// Writes one line: `body` (an object's text) with `id` and the parent
    /// the entry's first line takes, through the envelope's writer.
    fn write(
        &mut self,
        imported: &mut Imported,
        body: &str,
        id: Option<&MessageId>,
    ) -> Result<(), ImportError> {
        let parent = std::mem::take(&mut self.parent);
        Envelope::append_to_object(&mut imported.text, body, id, &parent)?;
        imported.text.push(b'\n');
        imported.lines += 1;
        Ok(())
    }

    /// Writes a line made by the transcript codec, under the entry's parent.
    fn write_message(
        &mut self,
        imported: &mut Imported,
        message: AgentMessage,
    ) -> Result<(), ImportError> {
        let parent = std::mem::take(&mut self.parent);
        message
            .with_parent_id(parent)
            .write_line(&mut imported.text)?;
        imported.text.push(b'\n');
        imported.lines += 1;
        Ok(())
    }

    /// Writes an `extension` line of `kind` holding `data` (JSON text).
    fn extension(
        &mut self,
        imported: &mut Imported,
        kind: &str,
        data: &str,
        id: Option<&MessageId>,
    ) -> Result<(), ImportError> {
        let data: &RawValue = serde_json::from_str(data)?;
        let body = serde_json::to_string(&ExtensionLine {
            role: "extension",
            kind,
            data,
        })?;
        self.write(imported, &body, id)?;
        imported.extensions += 1;
        Ok(())
    }

    /// Writes the fields of `entry` other than `known` as an `extension`
    /// line of `kind` (`<id>/extra`), if it has any.
    fn extras(
        &mut self,
        imported: &mut Imported,
        kind: &str,
        entry: &PiEntry<'_>,
        known: &[&str],
    ) -> Result<(), ImportError> {
        if let Some(rest) = extras(&entry.map, known)? {
            self.extension(imported, kind, &rest, Some(&entry.extra_id()))?;
        }
        Ok(())
    }

    /// Converts one line of the file.
    fn entry(
        &mut self,
        line: usize,
        raw: &str,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        if raw.trim().is_empty() {
            return Ok(());
        }
        let mut value = serde_json::from_str::<Map<String, Value>>(raw).ok();
        if value.is_none() {
            // Nested past serde_json's 128 levels: pi reads it (a tool call's
            // arguments, say), and so does the session reader.
            if let Ok(Value::Object(map)) = crate::transcript::read_deep_json(raw) {
                value = Some(map);
            }
        }
        if value.is_none() {
            // A string cut inside a surrogate pair: read as pi reads it, with
            // U+FFFD for the lone half; the message line keeps its bytes.
            if let Some(fixed) = crate::transcript::replace_lone_surrogates(raw) {
                value = serde_json::from_str::<Map<String, Value>>(&fixed).ok();
                if value.is_some() {
                    imported.warnings.push(ImportWarning::warning(
                        line,
                        WarningCode::LoneSurrogate,
                        "a string holds a lone UTF-16 surrogate (half of a character cut in two); the line keeps its bytes, and U+FFFD is sent in its place",
                    ));
                }
            }
        }
        if value.is_none() {
            if let Some(parts) = joined(raw) {
                imported.warnings.push(ImportWarning::warning(
                    line,
                    WarningCode::LostNewline,
                    format!(
                        "{} parts on one line (a write that lost its newline); each whole entry converted, as the session reader reads them",
                        parts.len()
                    ),
                ));
                for part in parts {
                    self.entry(line, part, imported)?;
                }
                return Ok(());
            }
        }
        let Some(map) = value else {
            return self.unparsed(line, raw, imported);
        };
        let id = MessageId::from(self.id(self.index).unwrap_or_default());
        self.index += 1;
        let timestamp = string_field(&map, "timestamp").and_then(iso_millis);
        let entry = PiEntry {
            line,
            raw,
            map,
            id,
            timestamp,
        };
        if !self.headed {
            return self.headless(&entry, imported);
        }
        self.parent = match entry.map.get("parentId") {
            Some(Value::String(parent)) => ParentId::Id(MessageId::from(parent.as_str())),
            Some(Value::Null) => ParentId::Root,
            _ => ParentId::Previous,
        };
        let head: EntryHead<'_> = serde_json::from_str(raw).unwrap_or(EntryHead {
            kind: None,
            message: None,
        });
        match head.kind.as_deref() {
            Some("message") => self.message(&entry, head.message, imported),
            Some("compaction") => self.compaction(&entry, imported),
            Some("branch_summary") => self.branch_summary(&entry, imported),
            Some("custom_message") => self.custom_message(&entry, imported),
            Some(other) => {
                let kind = format!("pi.{other}");
                self.extension(imported, &kind, raw.trim(), Some(&entry.id))
            }
            None => {
                imported.warnings.push(ImportWarning::warning(
                    line,
                    WarningCode::NoType,
                    "entry without a string `type`; kept as an `extension` line of kind `pi.entry`",
                ));
                self.extension(imported, "pi.entry", raw.trim(), Some(&entry.id))
            }
        }
    }

    /// A line that is not a JSON object: an `extension` line of kind
    /// `pi.unparsed` holding its text, and an error.
    fn unparsed(
        &mut self,
        line: usize,
        raw: &str,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        // The first pass counted the line as an entry if it reads as an
        // object at all: so does this one, so that ids stay in step.
        if serde_json::from_str::<IdHead>(raw).is_ok() {
            self.index += 1;
        }
        imported.warnings.push(ImportWarning::error(
            line,
            WarningCode::NotAnEntry,
            "not a JSON object; kept as an `extension` line of kind `pi.unparsed`",
        ));
        self.extension(imported, "pi.unparsed", &serde_json::to_string(raw)?, None)
    }

    /// An entry of a file without a `session` header: pi reads none, so it is
    /// kept as an `extension` line, never sent (said once).
    fn headless(
        &mut self,
        entry: &PiEntry<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        if !self.said_headless {
            self.said_headless = true;
            imported.warnings.push(ImportWarning::warning(
                entry.line,
                WarningCode::NoSessionHeader,
                "the file does not start with a pi `session` header, so pi reads no entry of it and sends nothing: every entry is kept as an `extension` line, none sent",
            ));
        }
        let kind = format!("pi.{}", string_field(&entry.map, "type").unwrap_or("entry"));
        self.extension(imported, &kind, entry.raw.trim(), Some(&entry.id))
    }

    /// A `message` entry: its message byte for byte, with the entry's id
    /// (unless it has one); the entry's other fields in an extra line.
    fn message(
        &mut self,
        entry: &PiEntry<'_>,
        message: Option<&RawValue>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let object = entry.map.get("message").and_then(Value::as_object);
        let role = object.and_then(|m| m.get("role"));
        match role.and_then(Value::as_str) {
            // Roles pi's `convertToLlm` does not send (`hookMessage` is
            // renamed only in files older than version 3): kept whole, never
            // sent.
            Some(unsent @ ("system" | "hookMessage"))
                if unsent == "system" || self.version >= 3 =>
            {
                imported.warnings.push(ImportWarning::warning(
                    entry.line,
                    WarningCode::NotSent,
                    format!("a message of role `{unsent}`, which pi does not send; kept as an `extension` line of kind `pi.message`"),
                ));
                return self.extension(imported, "pi.message", entry.raw.trim(), Some(&entry.id));
            }
            // A message (not a `compaction` entry) pi sends as user text: a
            // `custom` line with that text, the message in its `details`, so
            // that it is no compaction here either.
            Some("compactionSummary") => {
                if let Some(message) = entry.map.get("message") {
                    return self.summary_message(message, &entry.id, imported);
                }
            }
            _ => {}
        }
        let Some(message) = message.filter(|_| role.is_some_and(Value::is_string)) else {
            imported.warnings.push(ImportWarning::error(
                entry.line,
                WarningCode::BadMessage,
                "`message` entry without a message object that has a string `role`; kept as an `extension` line of kind `pi.message`",
            ));
            return self.extension(imported, "pi.message", entry.raw.trim(), Some(&entry.id));
        };
        let has_id = object.is_some_and(|m| m.contains_key("id"));
        self.write(imported, message.get(), (!has_id).then_some(&entry.id))?;
        imported.messages += 1;
        // The entry's save time is not kept: the message has its own.
        let mut known = base_known(&entry.map);
        known.extend(["timestamp", "message"]);
        self.extras(imported, "pi.message", entry, &known)
    }

    /// A `message` entry of role `compactionSummary` as the `custom` line pi
    /// sends it as: the summary's text framed as pi frames it, the message
    /// whole in `details`.
    fn summary_message(
        &mut self,
        message: &Value,
        id: &MessageId,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let summary = CompactionSummary {
            summary: string_field_of(message, "summary")
                .unwrap_or_default()
                .to_owned(),
            tokens_before: 0,
            first_kept_id: None,
            timestamp: message
                .get("timestamp")
                .and_then(Value::as_u64)
                .unwrap_or(0),
            details: None,
        };
        let text = summary
            .render()
            .first()
            .and_then(|m| m.as_user().map(|u| u.text()))
            .unwrap_or_default();
        let body = serde_json::to_string(&SummaryMessageLine {
            role: "custom",
            custom_type: "compactionSummary",
            content: &text,
            display: false,
            details: message,
            timestamp: (summary.timestamp > 0).then_some(summary.timestamp),
        })?;
        self.write(imported, &body, Some(id))?;
        imported.messages += 1;
        Ok(())
    }

    /// A `compaction` entry: a `compactionSummary` line (`firstKeptId` the
    /// id of the entry pi kept from); only what that line carries counts as
    /// kept, anything else (a malformed field included) goes to the extra
    /// line.
    fn compaction(
        &mut self,
        entry: &PiEntry<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let map = &entry.map;
        let mut known = base_known(map);
        let by_id = string_field(map, "firstKeptEntryId").map(str::to_owned);
        let by_index = map
            .get("firstKeptEntryIndex")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok())
            .and_then(|i| self.id(i));
        let first_kept = match (by_id, by_index) {
            (Some(id), _) => {
                known.push("firstKeptEntryId");
                Some(id)
            }
            (None, Some(id)) => {
                known.push("firstKeptEntryIndex");
                Some(id)
            }
            (None, None) => None,
        };
        let summary_text = string_field(map, "summary");
        let tokens_before = map.get("tokensBefore").and_then(Value::as_u64);
        carried(
            &mut known,
            [
                ("summary", summary_text.is_some()),
                ("tokensBefore", tokens_before.is_some()),
            ],
        );
        let mut summary =
            CompactionSummary::new(summary_text.unwrap_or_default(), tokens_before.unwrap_or(0));
        summary.first_kept_id = first_kept.map(MessageId::from);
        summary.timestamp = entry.timestamp.unwrap_or(0);
        // pi's file lists (`details: {readFiles, modifiedFiles}`) ride on the
        // compaction, so a later compaction of the imported file carries
        // them; an extension's compaction (`fromHook`) has details of its
        // own, which pi ignores, and they stay in the extra line.
        if map.get("fromHook").and_then(Value::as_bool) != Some(true) {
            if let Some(details) = map.get("details").filter(|d| d.is_object()) {
                summary.details = Some(details.clone());
                known.push("details");
            }
        }
        self.summary_line(
            imported,
            entry,
            AgentMessage::custom(summary),
            "pi.compaction",
            known,
        )
    }

    /// A summary's line (a `compactionSummary` or `branchSummary`), then the
    /// entry's fields it has no place for (`known`, with the entry's time,
    /// are the ones it has) in an extra line of `kind`.
    fn summary_line(
        &mut self,
        imported: &mut Imported,
        entry: &PiEntry<'_>,
        summary: AgentMessage,
        kind: &str,
        mut known: Vec<&'static str>,
    ) -> Result<(), ImportError> {
        carried(&mut known, [("timestamp", entry.timestamp.is_some())]);
        self.write_message(imported, summary.with_id(Some(entry.id.clone())))?;
        imported.summaries += 1;
        self.extras(imported, kind, entry, &known)
    }

    /// A `branch_summary` entry: a `branchSummary` line, the fields it has no
    /// place for in the extra line.
    fn branch_summary(
        &mut self,
        entry: &PiEntry<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let map = &entry.map;
        let mut known = base_known(map);
        let summary_text = string_field(map, "summary");
        let from_id = string_field(map, "fromId");
        carried(
            &mut known,
            [
                ("summary", summary_text.is_some()),
                ("fromId", from_id.is_some()),
            ],
        );
        let mut summary = BranchSummary::new(summary_text.unwrap_or_default());
        summary.from_id = from_id.map(MessageId::from);
        summary.timestamp = entry.timestamp.unwrap_or(0);
        let summary = AgentMessage::custom(summary);
        self.summary_line(imported, entry, summary, "pi.branch_summary", known)
    }

    /// A `custom_message` entry: a `custom` line of its fields (sent as user
    /// content, as pi sends it), its time in milliseconds.
    fn custom_message(
        &mut self,
        entry: &PiEntry<'_>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let mut fields = Map::new();
        for (key, value) in &entry.map {
            match key.as_str() {
                "type" | "id" | "parentId" | "timestamp" | "role" => {}
                _ => {
                    fields.insert(key.clone(), value.clone());
                }
            }
        }
        if let Some(ms) = entry.timestamp {
            fields.insert("timestamp".into(), Value::from(ms));
        }
        let body = custom_body(&fields)?;
        self.write(imported, &body, Some(&entry.id))?;
        imported.messages += 1;
        Ok(())
    }
}

/// A `custom` line's fields as an object, `role` first and the rest in the
/// order of `fields`.
fn custom_body(fields: &Map<String, Value>) -> Result<String, ImportError> {
    use serde::ser::{SerializeMap, Serializer};
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::new(&mut out);
    let mut map = ser.serialize_map(Some(fields.len()))?;
    map.serialize_entry("role", "custom")?;
    for (key, value) in fields.iter().filter(|(k, _)| k.as_str() != "role") {
        map.serialize_entry(key, value)?;
    }
    map.end()?;
    String::from_utf8(out).map_err(|e| ImportError::Json(serde::ser::Error::custom(e)))
}

/// The parts of a line that holds several entries because a write lost its
/// newline (the session reader's rule), or `None`.
fn joined(raw: &str) -> Option<Vec<&str>> {
    let parts = crate::transcript::split_glued_line(raw)?;
    Some(parts.into_iter().filter_map(|r| raw.get(r)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_iso_times() {
        assert_eq!(
            iso_millis("2025-12-08T22:41:05.306Z"),
            Some(1_765_233_665_306)
        );
        assert_eq!(iso_millis("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(iso_millis("1970-01-01T01:00:00+01:00"), Some(0));
        assert_eq!(
            iso_millis("2024-02-29T12:00:00.5Z"),
            Some(1_709_208_000_500)
        );
        assert_eq!(iso_millis("2024-13-01T00:00:00Z"), None);
        assert_eq!(iso_millis("yesterday"), None);
        assert_eq!(iso_millis("2024-01-01T00:00:00"), None);
        assert_eq!(iso_millis("1969-12-31T23:59:59Z"), None);
    }

    #[test]
    fn fields_a_kind_cannot_hold_go_to_an_extra_line() {
        let text = concat!(
            r#"{"type":"session","version":2,"id":"s"}"#,
            "\n",
            r#"{"type":"compaction","timestamp":"soon","summary":"S","tokensBefore":1.5,"firstKeptEntryIndex":99}"#,
            "\n",
            r#"{"type":"compaction","id":"c2","summary":"T","tokensBefore":7,"firstKeptEntryId":"e1","firstKeptEntryIndex":0,"timestamp":"1970-01-01T00:00:01Z"}"#,
            "\n",
        );
        let imported = import(text).unwrap();
        let lines: Vec<&str> = std::str::from_utf8(&imported.text)
            .unwrap()
            .lines()
            .collect();
        assert_eq!(
            lines[1..],
            [
                r#"{"role":"compactionSummary","summary":"S","tokensBefore":0,"id":"s:1"}"#,
                r#"{"role":"extension","kind":"pi.compaction","data":{"firstKeptEntryIndex":99,"timestamp":"soon","tokensBefore":1.5},"id":"s:1/extra"}"#,
                r#"{"role":"compactionSummary","summary":"T","tokensBefore":7,"firstKeptId":"e1","timestamp":1000,"id":"c2"}"#,
                r#"{"role":"extension","kind":"pi.compaction","data":{"firstKeptEntryIndex":0},"id":"c2/extra"}"#,
            ]
        );
        assert!(imported.warnings.is_empty());
    }

    #[test]
    fn a_compaction_keeps_its_file_lists_unless_an_extension_made_it() {
        let text = concat!(
            r#"{"type":"session","version":3,"id":"s"}"#,
            "\n",
            r#"{"type":"compaction","id":"c1","parentId":null,"summary":"S","tokensBefore":7,"details":{"readFiles":["a.rs"],"modifiedFiles":["b.rs"]}}"#,
            "\n",
            r#"{"type":"compaction","id":"c2","parentId":"c1","summary":"T","tokensBefore":7,"details":{"mine":1},"fromHook":true}"#,
            "\n",
        );
        let imported = import(text).unwrap();
        let lines: Vec<&str> = std::str::from_utf8(&imported.text)
            .unwrap()
            .lines()
            .collect();
        assert_eq!(
            lines[1..],
            [
                r#"{"role":"compactionSummary","summary":"S","tokensBefore":7,"details":{"modifiedFiles":["b.rs"],"readFiles":["a.rs"]},"id":"c1","parentId":null}"#,
                r#"{"role":"compactionSummary","summary":"T","tokensBefore":7,"id":"c2","parentId":"c1"}"#,
                r#"{"role":"extension","kind":"pi.compaction","data":{"details":{"mine":1},"fromHook":true},"id":"c2/extra"}"#,
            ]
        );
    }

    #[test]
    fn adds_the_id_last() {
        let id = MessageId::from("a");
        let mut out = Vec::new();
        Envelope::append_to_object(
            &mut out,
            "{\"role\":\"user\"}",
            Some(&id),
            &ParentId::Previous,
        )
        .unwrap();
        assert_eq!(out, b"{\"role\":\"user\",\"id\":\"a\"}");
        out.clear();
        let id = MessageId::from("a\"b");
        Envelope::append_to_object(&mut out, "{ }", Some(&id), &ParentId::Root).unwrap();
        assert_eq!(out, b"{\"id\":\"a\\\"b\",\"parentId\":null}");
    }
}
