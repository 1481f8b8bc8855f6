//! `agentmsg import`: a pi coding-agent session file as an agentmsg transcript.
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

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::detect::text_lines;
use super::{iso_millis, ImportError, ImportWarning, Imported, WarningCode};
use crate::{AgentMessage, BranchSummary, CompactionSummary, MessageId};

/// The parts of an entry the import reads; the rest is kept through `raw`.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

/// One non-blank line of the session.
struct Entry<'a> {
    line: usize,
    raw: &'a str,
    /// The parsed entry, or `None` when the line is not a JSON object.
    value: Option<Map<String, Value>>,
}

impl Imported {
    fn push_line(&mut self, line: &str) {
        match self.parent.take() {
            Some(parent) => {
                let body = line.trim_end();
                let body = body.strip_suffix('}').unwrap_or(body).trim_end();
                self.text.extend_from_slice(body.as_bytes());
                if !body.ends_with('{') {
                    self.text.push(b',');
                }
                self.text.extend_from_slice(b"\"parentId\":");
                self.text.extend_from_slice(parent.as_bytes());
                self.text.push(b'}');
            }
            None => self.text.extend_from_slice(line.as_bytes()),
        }
        self.text.push(b'\n');
        self.lines += 1;
    }

    fn push_extension(
        &mut self,
        kind: &str,
        data_json: &str,
        id: Option<&str>,
    ) -> Result<(), ImportError> {
        let mut line = String::with_capacity(data_json.len() + 64);
        line.push_str("{\"role\":\"extension\",\"kind\":");
        line.push_str(&serde_json::to_string(kind)?);
        line.push_str(",\"data\":");
        line.push_str(data_json);
        if let Some(id) = id {
            line.push_str(",\"id\":");
            line.push_str(&serde_json::to_string(id)?);
        }
        line.push('}');
        self.push_line(&line);
        self.extensions += 1;
        Ok(())
    }
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
/// is a string (it becomes the line's id) and `parentId` (not kept: a transcript
/// is linear).
fn base_known(map: &Map<String, Value>) -> Vec<&'static str> {
    let mut known = vec!["type", "parentId"];
    if string_field(map, "id").is_some() {
        known.push("id");
    }
    known
}

/// The message object with `"id"` added as its last key (unless it has one).
fn with_id(message: &str, id: &str) -> Result<String, ImportError> {
    let message = message.trim();
    let body = message.strip_suffix('}').unwrap_or(message);
    let empty = body.trim_end() == "{";
    let mut out = String::with_capacity(message.len() + id.len() + 8);
    out.push_str(body.trim_end());
    if !empty {
        out.push(',');
    }
    out.push_str("\"id\":");
    out.push_str(&serde_json::to_string(id)?);
    out.push('}');
    Ok(out)
}

/// Converts the text of a pi session file.
pub(crate) fn import(text: &str) -> Result<Imported, ImportError> {
    let lines = || {
        text.split('\n')
            .enumerate()
            .map(|(i, raw)| (i + 1, raw.strip_suffix('\r').unwrap_or(raw)))
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

    /// A `message` entry of role `compactionSummary` as the `custom` line pi
    /// sends it as: the summary's text framed as pi frames it, the message
    /// whole in `details`.
    fn summary_message(
        &self,
        message: &Value,
        id: &str,
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
        };
        let text = summary
            .render()
            .first()
            .and_then(|m| m.as_user().map(|u| u.text()))
            .unwrap_or_default();
        let mut line = String::from("{\"role\":\"custom\",\"customType\":\"compactionSummary\"");
        line.push_str(",\"content\":");
        line.push_str(&serde_json::to_string(&text)?);
        line.push_str(",\"display\":false,\"details\":");
        line.push_str(&serde_json::to_string(message)?);
        if summary.timestamp > 0 {
            line.push_str(&format!(",\"timestamp\":{}", summary.timestamp));
        }
        line.push_str(",\"id\":");
        line.push_str(&serde_json::to_string(id)?);
        line.push('}');
        imported.push_line(&line);
        imported.messages += 1;
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
            if let Ok(Value::Object(map)) = crate::read_deep_json(raw) {
                value = Some(map);
            }
        }
        if value.is_none() {
            // A string cut inside a surrogate pair: read as pi reads it, with
            // U+FFFD for the lone half; the message line keeps its bytes.
            if let Some(fixed) = crate::replace_lone_surrogates(raw) {
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
        let entry = Entry { line, raw, value };
        let entry = &entry;

        let Some(map) = &entry.value else {
            // The first pass counted the line as an entry if it reads as an
            // object at all: so does this one, so that ids stay in step.
            if serde_json::from_str::<IdHead>(raw).is_ok() {
                self.index += 1;
            }
            imported.warnings.push(ImportWarning::error(
                entry.line,
                WarningCode::NotAnEntry,
                "not a JSON object; kept as an `extension` line of kind `pi.unparsed`",
            ));
            imported.push_extension("pi.unparsed", &serde_json::to_string(entry.raw)?, None)?;
            return Ok(());
        };
        let id = self.id(self.index).unwrap_or_default();
        self.index += 1;
        if !self.headed {
            if !self.said_headless {
                self.said_headless = true;
                imported.warnings.push(ImportWarning::warning(
                    entry.line,
                    WarningCode::NoSessionHeader,
                    "the file does not start with a pi `session` header, so pi reads no entry of it and sends nothing: every entry is kept as an `extension` line, none sent",
                ));
            }
            let kind = map.get("type").and_then(Value::as_str).unwrap_or("entry");
            imported.push_extension(&format!("pi.{kind}"), entry.raw.trim(), Some(&id))?;
            return Ok(());
        }
        // The tree: the line says its entry's parent (v2 and later; a v1
        // session is linear, each line following the one before).
        imported.parent = match map.get("parentId") {
            Some(Value::String(parent)) => Some(serde_json::to_string(parent)?),
            Some(Value::Null) => Some("null".to_owned()),
            _ => None,
        };
        let head: Head<'_> = serde_json::from_str(entry.raw).unwrap_or(Head {
            kind: None,
            message: None,
        });
        let timestamp = string_field(map, "timestamp").and_then(iso_millis);
        match head.kind.as_deref() {
            Some("message") => {
                let role = map
                    .get("message")
                    .and_then(Value::as_object)
                    .and_then(|m| m.get("role"));
                let role_ok = role.is_some_and(Value::is_string);
                match role.and_then(Value::as_str) {
                    // Roles pi's `convertToLlm` does not send (`hookMessage`
                    // is renamed only in files older than version 3): kept
                    // whole, never sent.
                    Some(unsent @ ("system" | "hookMessage"))
                        if unsent == "system" || self.version >= 3 =>
                    {
                        imported.warnings.push(ImportWarning::warning(
                            entry.line,
                            WarningCode::NotSent,
                            format!("a message of role `{unsent}`, which pi does not send; kept as an `extension` line of kind `pi.message`"),
                        ));
                        imported.push_extension("pi.message", entry.raw.trim(), Some(&id))?;
                        return Ok(());
                    }
                    // A message (not a `compaction` entry) pi sends as user
                    // text: a `custom` line with that text, the message in its
                    // `details`, so that it is no compaction here either.
                    Some("compactionSummary") => {
                        if let Some(message) = map.get("message") {
                            self.summary_message(message, &id, imported)?;
                            return Ok(());
                        }
                    }
                    _ => {}
                }
                match head.message.filter(|_| role_ok) {
                    Some(message) => {
                        let has_id = map
                            .get("message")
                            .and_then(Value::as_object)
                            .is_some_and(|m| m.contains_key("id"));
                        let line = if has_id {
                            message.get().trim().to_owned()
                        } else {
                            with_id(message.get(), &id)?
                        };
                        imported.push_line(&line);
                        imported.messages += 1;
                        // The entry's save time is not kept: the message has its own.
                        let mut known = base_known(map);
                        known.extend(["timestamp", "message"]);
                        if let Some(rest) = extras(map, &known)? {
                            imported.push_extension(
                                "pi.message",
                                &rest,
                                Some(&format!("{id}/extra")),
                            )?;
                        }
                    }
                    None => {
                        imported.warnings.push(ImportWarning::error(
                            entry.line,
                            WarningCode::BadMessage,
                            "`message` entry without a message object that has a string `role`; kept as an `extension` line of kind `pi.message`",
                        ));
                        imported.push_extension("pi.message", entry.raw.trim(), Some(&id))?;
                    }
                }
            }
            Some("compaction") => {
                // Only what the summary line carries counts as kept; anything
                // else (a malformed field included) goes to the extra line.
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
                for (key, carried) in [
                    ("summary", summary_text.is_some()),
                    ("tokensBefore", tokens_before.is_some()),
                    ("timestamp", timestamp.is_some()),
                ] {
                    if carried {
                        known.push(key);
                    }
                }
                let mut summary = CompactionSummary::new(
                    summary_text.unwrap_or_default(),
                    tokens_before.unwrap_or(0),
                );
                summary.first_kept_id = first_kept.map(MessageId::from);
                summary.timestamp = timestamp.unwrap_or(0);
                let line = AgentMessage::custom(summary)
                    .with_id(Some(MessageId::from(id.clone())))
                    .to_line()?;
                imported.push_line(&line);
                imported.summaries += 1;
                if let Some(rest) = extras(map, &known)? {
                    imported.push_extension(
                        "pi.compaction",
                        &rest,
                        Some(&format!("{id}/extra")),
                    )?;
                }
            }
            Some("branch_summary") => {
                let mut known = base_known(map);
                let summary_text = string_field(map, "summary");
                let from_id = string_field(map, "fromId");
                for (key, carried) in [
                    ("summary", summary_text.is_some()),
                    ("fromId", from_id.is_some()),
                    ("timestamp", timestamp.is_some()),
                ] {
                    if carried {
                        known.push(key);
                    }
                }
                let mut summary = BranchSummary::new(summary_text.unwrap_or_default());
                summary.from_id = from_id.map(MessageId::from);
                summary.timestamp = timestamp.unwrap_or(0);
                let line = AgentMessage::custom(summary)
                    .with_id(Some(MessageId::from(id.clone())))
                    .to_line()?;
                imported.push_line(&line);
                imported.summaries += 1;
                if let Some(rest) = extras(map, &known)? {
                    imported.push_extension(
                        "pi.branch_summary",
                        &rest,
                        Some(&format!("{id}/extra")),
                    )?;
                }
            }
            Some("custom_message") => {
                // Sent to the model as user content: pi's `custom` message.
                let mut message = map.clone();
                message.remove("type");
                message.remove("id");
                message.remove("parentId");
                match timestamp {
                    Some(ms) => {
                        message.insert("timestamp".into(), Value::from(ms));
                    }
                    None => {
                        message.remove("timestamp");
                    }
                }
                let mut line = String::from("{\"role\":\"custom\"");
                for (key, value) in &message {
                    line.push(',');
                    line.push_str(&serde_json::to_string(key)?);
                    line.push(':');
                    line.push_str(&serde_json::to_string(value)?);
                }
                line.push_str(",\"id\":");
                line.push_str(&serde_json::to_string(&id)?);
                line.push('}');
                imported.push_line(&line);
                imported.messages += 1;
            }
            Some(other) => {
                imported.push_extension(&format!("pi.{other}"), entry.raw.trim(), Some(&id))?;
            }
            None => {
                imported.warnings.push(ImportWarning::warning(
                    entry.line,
                    WarningCode::NoType,
                    "entry without a string `type`; kept as an `extension` line of kind `pi.entry`",
                ));
                imported.push_extension("pi.entry", entry.raw.trim(), Some(&id))?;
            }
        }
        Ok(())
    }
}

/// The parts of a line that holds several entries because a write lost its
/// newline (the session reader's rule), or `None`.
fn joined(raw: &str) -> Option<Vec<&str>> {
    let parts = crate::split_glued_line(raw)?;
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
    fn adds_the_id_last() {
        assert_eq!(
            with_id("{\"role\":\"user\"}", "a").unwrap(),
            "{\"role\":\"user\",\"id\":\"a\"}"
        );
        assert_eq!(with_id("{ }", "a\"b").unwrap(), "{\"id\":\"a\\\"b\"}");
    }
}
