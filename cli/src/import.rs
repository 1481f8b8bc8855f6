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
//! Ids: an entry's own `id` (pi sessions of version 2 and later) is kept; an
//! entry without one (version 1) gets `<session id>:<entry index>`, the index
//! pi's `firstKeptEntryIndex` counts in, so the output is the same on every run.
//! Not kept: the entry's own ISO `timestamp` on `message` entries (the message
//! has its own, in milliseconds). `parentId` is kept on every line of an entry
//! that has one (v2 and later), so a branched session stays a tree; a
//! `custom_message` entry becomes a `custom` line (sent as user content, as pi
//! sends it).

use std::io::Write;
use std::path::PathBuf;

use agentmsg_runtime::{AgentMessage, BranchSummary, CompactionSummary, MessageId};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::error::CliError;
use crate::load::Diagnostic;
use crate::Outcome;

/// The arguments of `agentmsg import`.
#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// A pi coding-agent session file (`*.jsonl`; `-` reads standard input).
    pub file: PathBuf,
    /// Where to write the transcript (standard output when absent).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

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

/// What an import produced.
#[derive(Debug, Default)]
pub struct Imported {
    /// The transcript, JSON Lines.
    pub text: Vec<u8>,
    /// Lines written.
    pub lines: usize,
    /// Message lines.
    pub messages: usize,
    /// `compactionSummary` and `branchSummary` lines.
    pub summaries: usize,
    /// `extension` lines.
    pub extensions: usize,
    /// Problems, by line of the session file.
    pub diagnostics: Vec<Diagnostic>,
    /// The `parentId` (JSON text) the next line written gets, if any.
    pub(crate) parent: Option<String>,
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
    ) -> Result<(), CliError> {
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

/// Unix milliseconds of an ISO 8601 UTC time such as `2025-12-08T22:41:05.306Z`
/// (an offset such as `+02:00` is applied); `None` when it is not one.
pub fn iso_millis(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let s = text.get(from..from + len)?;
        if s.bytes().all(|c| c.is_ascii_digit()) {
            s.parse().ok()
        } else {
            None
        }
    };
    if b.len() < 19 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    if !matches!(b.get(10), Some(b'T' | b't' | b' '))
        || b.get(13) != Some(&b':')
        || b.get(16) != Some(&b':')
    {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    let mut millis = 0i64;
    if b.get(i) == Some(&b'.') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        let frac = text.get(start..i)?;
        if frac.is_empty() {
            return None;
        }
        let ms: String = frac.chars().chain("00".chars()).take(3).collect();
        millis = ms.parse().ok()?;
    }
    let offset_minutes = match text.get(i..)? {
        "Z" | "z" => 0,
        rest if rest.len() == 6
            && matches!(rest.as_bytes().first(), Some(b'+' | b'-'))
            && rest.as_bytes().get(3) == Some(&b':') =>
        {
            let h = num(i + 1, 2)?;
            let m = num(i + 4, 2)?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 60 + m)
        }
        _ => return None,
    };
    // Days from 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    u64::try_from(seconds * 1000 + millis).ok()
}

fn string_field<'m>(map: &'m Map<String, Value>, key: &str) -> Option<&'m str> {
    map.get(key).and_then(Value::as_str)
}

/// The fields of `map` other than `known`, as a JSON object text, or `None`.
fn extras(map: &Map<String, Value>, known: &[&str]) -> Result<Option<String>, CliError> {
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
fn with_id(message: &str, id: &str) -> Result<String, CliError> {
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
pub fn import(text: &str) -> Result<Imported, CliError> {
    let mut imported = Imported::default();
    let mut entries = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        let value = serde_json::from_str::<Map<String, Value>>(raw).ok();
        entries.push(Entry {
            line: i + 1,
            raw,
            value,
        });
    }
    let session_id = entries
        .iter()
        .filter_map(|e| e.value.as_ref())
        .find(|v| string_field(v, "type") == Some("session"))
        .and_then(|v| string_field(v, "id"))
        .unwrap_or("pi")
        .to_owned();
    // pi counts `firstKeptEntryIndex` over the parsed entries, the header included.
    let ids: Vec<String> = entries
        .iter()
        .filter(|e| e.value.is_some())
        .enumerate()
        .map(|(index, e)| {
            e.value
                .as_ref()
                .and_then(|v| string_field(v, "id"))
                .filter(|_| {
                    e.value.as_ref().and_then(|v| string_field(v, "type")) != Some("session")
                })
                .map_or_else(|| format!("{session_id}:{index}"), str::to_owned)
        })
        .collect();
    let mut index = 0usize;
    for entry in &entries {
        let Some(map) = &entry.value else {
            imported.diagnostics.push(Diagnostic::error(
                entry.line,
                "not-an-entry",
                "not a JSON object; kept as an `extension` line of kind `pi.unparsed`",
            ));
            imported.push_extension("pi.unparsed", &serde_json::to_string(entry.raw)?, None)?;
            continue;
        };
        let id = ids.get(index).cloned().unwrap_or_default();
        index += 1;
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
                let role_ok = map
                    .get("message")
                    .and_then(Value::as_object)
                    .and_then(|m| m.get("role"))
                    .is_some_and(Value::is_string);
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
                        imported.diagnostics.push(Diagnostic::error(
                            entry.line,
                            "bad-message",
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
                    .and_then(|i| ids.get(i).cloned());
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
                imported.diagnostics.push(Diagnostic::warning(
                    entry.line,
                    "no-type",
                    "entry without a string `type`; kept as an `extension` line of kind `pi.entry`",
                ));
                imported.push_extension("pi.entry", entry.raw.trim(), Some(&id))?;
            }
        }
    }
    Ok(imported)
}

/// What a log is, from its entries.
pub enum Detected {
    /// A pi session file.
    Pi,
    /// A Claude Code log, parsed (line number, entry).
    ClaudeCode(Vec<(usize, Map<String, Value>)>),
    /// A Codex CLI rollout, parsed.
    Codex(Vec<(usize, Map<String, Value>)>),
    /// None of them: the first line that could not be placed.
    Unknown {
        /// Its number.
        line: usize,
        /// Its text (cut at 200 characters).
        text: String,
    },
}

const PI_TYPES: &[&str] = &[
    "session",
    "message",
    "compaction",
    "branch_summary",
    "custom",
    "custom_message",
    "label",
    "session_info",
    "model_change",
    "thinking_level_change",
];

/// Which agent wrote `text`: pi (a `session` header, or pi entry types),
/// Claude Code (`uuid` with `parentUuid`/`sessionId`), Codex (`payload`d
/// `session_meta`/`response_item`… lines).
pub fn detect(text: &str) -> Detected {
    let mut entries = Vec::new();
    let mut first_line: Option<(usize, &str)> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.trim();
        if raw.is_empty() {
            continue;
        }
        first_line.get_or_insert((i + 1, raw));
        if let Ok(map) = serde_json::from_str::<Map<String, Value>>(raw) {
            entries.push((i + 1, map));
        }
    }
    let maps: Vec<Map<String, Value>> = entries.iter().take(50).map(|(_, m)| m.clone()).collect();
    let first_is_pi = maps.first().is_some_and(|m| {
        !m.contains_key("role")
            && !m.contains_key("uuid")
            && !m.contains_key("payload")
            && m.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| PI_TYPES.contains(&t))
    });
    if first_is_pi {
        Detected::Pi
    } else if crate::claude::detect(&maps) {
        Detected::ClaudeCode(entries)
    } else if crate::codex::detect(&maps) {
        Detected::Codex(entries)
    } else {
        let (line, raw) = first_line.unwrap_or((0, ""));
        Detected::Unknown {
            line,
            text: raw.chars().take(200).collect(),
        }
    }
}

/// Runs `agentmsg import`.
pub fn run(args: &ImportArgs) -> Result<Outcome, CliError> {
    let bytes = crate::load::read_input(&args.file)?;
    let file = args.file.display();
    let text = String::from_utf8_lossy(&bytes);
    if let std::borrow::Cow::Owned(_) = text {
        crate::output::note!("{file}: warning: not UTF-8; invalid bytes were replaced by U+FFFD");
    }
    let imported = match detect(&text) {
        Detected::Pi => import(&text)?,
        Detected::ClaudeCode(entries) => crate::claude::import(&entries)?,
        Detected::Codex(entries) => crate::codex::import(&entries)?,
        Detected::Unknown { line, text } => {
            crate::output::note!(
                "{file}:{line}: error[unrecognised]: not a pi, Claude Code or Codex log; the first line it could not place: {text}"
            );
            return Ok(Outcome::Problems);
        }
    };
    for d in &imported.diagnostics {
        crate::output::note!("{}", d.render(&file));
    }
    match &args.output {
        Some(path) => std::fs::write(path, &imported.text).map_err(|source| CliError::Write {
            path: path.clone(),
            source,
        })?,
        None => crate::output::stdout().write_all(&imported.text)?,
    }
    crate::output::note!(
        "{file}: {} lines written: {} messages, {} summaries, {} extension lines",
        imported.lines,
        imported.messages,
        imported.summaries,
        imported.extensions
    );
    Ok(
        if imported
            .diagnostics
            .iter()
            .any(|d| d.severity == crate::load::Severity::Error)
        {
            Outcome::Problems
        } else {
            Outcome::Ok
        },
    )
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
            r#"{"type":"session","id":"s"}"#,
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
        assert!(imported.diagnostics.is_empty());
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
