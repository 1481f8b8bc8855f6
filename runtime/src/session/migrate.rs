//! Rewriting an older pi session file as pi's current version, as pi does
//! when it loads one (pi migrates the entries, then rewrites the file).
//!
//! Reading migrates in memory only, so an unchanged session saves byte for
//! byte. [`Session::migrate`] writes the migration into the lines: the header's
//! `version` becomes 3; a version 1 entry gets its `id` and `parentId` (the ids
//! the in-memory migration gave it), as the object's last keys, as pi's
//! `JSON.stringify` writes keys added to an object; a compaction's
//! `firstKeptEntryIndex` is replaced by `firstKeptEntryId`; a version 2
//! message of role `hookMessage` becomes `custom`. Every other key keeps its
//! place and its value's exact text.

use serde::de::{Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use super::entry::{EntryKind, LineText};
use super::error::SessionError;
use super::pi::PI_SESSION_VERSION;
use super::{Session, SessionFormat};
use crate::ParentId;

/// An object's keys and their values' text, in order.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de> serde::Deserialize<'de> for Fields<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Fields<'de>, A::Error> {
                let mut fields = Vec::new();
                while let Some((key, value)) = map.next_entry::<String, &'de RawValue>()? {
                    fields.push((key, value));
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
    }
}

impl Fields<'_> {
    fn get(&self, key: &str) -> Option<&RawValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }

    /// The object as compact JSON, each value's text as it was, with `set`
    /// replacing the value of its key in place or added at the end, and
    /// `remove` left out.
    fn write(&self, set: &[(&str, String)], remove: &[&str]) -> String {
        let mut out = String::from("{");
        let mut first = true;
        let mut push = |out: &mut String, key: &str, value: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&serde_json::Value::from(key).to_string());
            out.push(':');
            out.push_str(value);
        };
        for (key, value) in &self.0 {
            if remove.contains(&key.as_str()) {
                continue;
            }
            match set.iter().find(|(k, _)| k == key) {
                Some((_, new)) => push(&mut out, key, new),
                None => push(&mut out, key, value.get()),
            }
        }
        for (key, value) in set {
            if self.get(key).is_none() {
                push(&mut out, key, value);
            }
        }
        out.push('}');
        out
    }
}

fn json_string(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

impl Session {
    /// Rewrites a pi session of version 1 or 2 as version 3, as pi does when
    /// it loads one: what [`to_bytes`](Self::to_bytes) and
    /// [`save`](Self::save) then write is the migrated file, and entries can
    /// be appended (a version 1 file has no ids to hang them on). Whether
    /// anything changed: an agentmsg transcript and a pi session of the
    /// current version are left as they are. The context is the same before
    /// and after. Save the whole file afterwards, not only the
    /// [`unsaved`](Self::unsaved) entries: every line changed.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// # use agentmsg::session::SessionFormat;
    /// let v1 = concat!(
    ///     r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#, "\n",
    ///     r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#, "\n",
    /// );
    /// let mut session = Session::read(v1.as_bytes()).unwrap();
    /// assert!(session.append(Message::assistant("hello").into()).is_err());
    /// assert!(session.migrate().unwrap());
    /// assert_eq!(session.format(), SessionFormat::Pi { version: 3 });
    /// let text = String::from_utf8(session.to_bytes()).unwrap();
    /// assert!(text.starts_with(r#"{"type":"session","id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/","version":3}"#));
    /// assert!(text.contains(r#""timestamp":1},"id":"00000001","parentId":null}"#));
    /// session.append(Message::assistant("hello").into()).unwrap();
    /// assert_eq!(session.context(None).unwrap().messages.len(), 2);
    /// ```
    ///
    /// # Errors
    /// [`SessionError::Migrate`] naming the line when a line the session read
    /// as an entry is not a JSON object after all.
    pub fn migrate(&mut self) -> Result<bool, SessionError> {
        let SessionFormat::Pi { version } = self.format else {
            return Ok(false);
        };
        if version >= PI_SESSION_VERSION {
            return Ok(false);
        }
        let mut lines = Vec::with_capacity(self.entries.len());
        for entry in &self.entries {
            let text = String::from_utf8_lossy(self.line_bytes(entry));
            let fields: Fields<'_> =
                serde_json::from_str(&text).map_err(|e| SessionError::Migrate {
                    line: entry.line_no,
                    error: e.to_string(),
                })?;
            let mut set: Vec<(&str, String)> = Vec::new();
            let mut remove: Vec<&str> = Vec::new();
            match &entry.kind {
                EntryKind::Header => set.push(("version", PI_SESSION_VERSION.to_string())),
                kind => {
                    if version < 2 {
                        if let Some(id) = &entry.id {
                            set.push(("id", json_string(id.as_str())));
                        }
                        let parent = match &entry.declared {
                            ParentId::Id(p) => json_string(p.as_str()),
                            ParentId::Root | ParentId::Previous => "null".to_owned(),
                        };
                        set.push(("parentId", parent));
                        if let EntryKind::Compaction(c) = kind {
                            if fields.get("firstKeptEntryIndex").is_some() {
                                remove.push("firstKeptEntryIndex");
                                if let Some(kept) = &c.first_kept_id {
                                    set.push(("firstKeptEntryId", json_string(kept.as_str())));
                                }
                            }
                        }
                    }
                    if let Some(message) = fields.get("message") {
                        if let Ok(inner) = serde_json::from_str::<Fields<'_>>(message.get()) {
                            if inner.get("role").map(RawValue::get) == Some("\"hookMessage\"") {
                                set.push((
                                    "message",
                                    inner.write(&[("role", json_string("custom"))], &[]),
                                ));
                            }
                        }
                    }
                }
            }
            lines.push(fields.write(&set, &remove));
        }
        for (entry, line) in self.entries.iter_mut().zip(lines) {
            entry.text = match entry.text {
                LineText::Span(start, end) | LineText::Replaced(start, end, _) => {
                    LineText::Replaced(start, end, line)
                }
                LineText::Owned(_) => LineText::Owned(line),
            };
        }
        self.format = SessionFormat::Pi {
            version: PI_SESSION_VERSION,
        };
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::session::SessionFormat;
    use crate::Session;

    #[test]
    fn a_v2_session_renames_hook_messages_and_sets_its_version_in_place() {
        let v2 = concat!(
            r#"{"type":"session","version":2,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#,
            "\n",
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"hookMessage","customType":"x","content":"hi","display":true,"timestamp":1}}"#,
            "\n",
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"user","content":"go","timestamp":2}}"#,
            "\n",
        );
        let mut session = Session::read(v2.as_bytes()).unwrap();
        let before = session.context(None).unwrap().into_owned();
        assert!(session.migrate().unwrap());
        let text = String::from_utf8(session.to_bytes()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#
        );
        assert_eq!(
            lines[1],
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"custom","customType":"x","content":"hi","display":true,"timestamp":1}}"#
        );
        // An entry with nothing to migrate is written as it was.
        assert_eq!(lines[2], v2.lines().nth(2).unwrap());
        let again = Session::read(text.as_bytes()).unwrap();
        assert_eq!(again.format(), SessionFormat::Pi { version: 3 });
        assert_eq!(again.context(None).unwrap().into_owned(), before);
    }

    #[test]
    fn agentmsg_transcripts_and_current_pi_sessions_are_left_alone() {
        let mut session =
            Session::read(b"{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n").unwrap();
        assert!(!session.migrate().unwrap());
        let v3 = br#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}"#;
        let mut session = Session::read(v3).unwrap();
        assert!(!session.migrate().unwrap());
        assert_eq!(session.to_bytes(), v3);
    }
}
