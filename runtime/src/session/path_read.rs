//! Reading one path of a session file: the entries from the root to a leaf,
//! and nothing else, in two passes over the file.
//!
//! The first pass reads each line's `id` and `parentId` (and pi's `type`),
//! not the message, and keeps them with where the line is; the second reads
//! the lines of the path. Memory holds the longest line, the ids and parents,
//! and the path, never the file: the context of a leaf of a file of any size.
//!
//! What this pass cannot answer as [`Session::open`] would (a pi version 1
//! file, whose ids only migration gives; two objects on one line; a duplicate
//! id; a parent after its child, which may close a cycle; a line the first
//! pass and the decoder would read differently) is read whole instead, so the
//! context is always the one `open` gives, and so are the errors.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use serde::Deserialize;

use super::error::SessionError;
use super::{pi, Session, SessionFormat};
use crate::{MessageId, ParentId};

/// What the first pass reads of a line.
#[derive(Deserialize)]
struct Head<'a> {
    #[serde(borrow, default)]
    id: Option<Key<'a>>,
    #[serde(rename = "parentId", borrow, default, deserialize_with = "present")]
    parent_id: Option<Key<'a>>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<Key<'a>>,
}

/// A key's value: a string, `null`, or anything else.
#[derive(Deserialize)]
#[serde(untagged)]
enum Key<'a> {
    Text(#[serde(borrow)] Cow<'a, str>),
    Null(()),
    Other(serde::de::IgnoredAny),
}

impl Key<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            Self::Text(text) => Some(text),
            _ => None,
        }
    }
}

fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Key<'de>>, D::Error> {
    Key::deserialize(d).map(Some)
}

/// One line of the file, as the first pass saw it.
struct Spot {
    line_no: usize,
    start: u64,
    len: usize,
    id: Option<MessageId>,
    parent: ParentId,
}

/// Why the file is read whole instead.
struct Whole;

impl Session {
    /// The session file at `path`, read only along the path from the root to
    /// `leaf` (the last entry when `None`): the session holds those entries
    /// (and a pi file's header), so its [`context`](Self::context) at that
    /// leaf is the one [`open`](Self::open) gives, read in the memory of the
    /// path. Its warnings are the path's; [`to_bytes`](Self::to_bytes) gives
    /// the path's lines, not the file.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// let mut session = Session::new();
    /// let hi = session.append(Message::user("hi").into()).unwrap();
    /// session.append(Message::assistant("one way").into()).unwrap();
    /// session.branch(hi.as_str()).unwrap();
    /// let other = session.append(Message::assistant("another").into()).unwrap();
    /// let dir = tempfile::tempdir().unwrap();
    /// let file = dir.path().join("s.jsonl");
    /// session.save(&file).unwrap();
    ///
    /// let path = Session::open_path(&file, Some(other.as_str())).unwrap();
    /// assert_eq!(path.entries().len(), 2);
    /// assert_eq!(path.context(None).unwrap(), session.context(Some(other.as_str())).unwrap());
    /// ```
    ///
    /// # Errors
    /// As [`open`](Self::open), and [`SessionError::NoSuchEntry`] when no
    /// entry has the id `leaf`.
    pub fn open_path(path: impl AsRef<Path>, leaf: Option<&str>) -> Result<Self, SessionError> {
        let path = path.as_ref();
        match read_path(path, leaf)? {
            Ok(session) => Ok(session),
            Err(Whole) => {
                let session = Self::open(path)?;
                // The path's entries, as the pass would have given them.
                let lines = session
                    .path(leaf)?
                    .into_iter()
                    .map(|e| (e.line_no, session.line(e).into_owned()))
                    .collect::<Vec<_>>();
                let header = session
                    .entries
                    .iter()
                    .find(|e| !e.in_tree())
                    .filter(|_| matches!(session.format, SessionFormat::Pi { .. }))
                    .map(|e| (e.line_no, session.line(e).into_owned()));
                if matches!(session.format, SessionFormat::Pi { version } if version < 2) {
                    // Ids exist only as migrated: the whole session is the path.
                    return Ok(session);
                }
                Self::from_lines(header.into_iter().chain(lines))
            }
        }
    }
}

/// The two passes; `Err(Whole)` where the file must be read whole.
fn read_path(path: &Path, leaf: Option<&str>) -> Result<Result<Session, Whole>, SessionError> {
    // Another agent's log is converted whole ([`crate::import`]).
    if let SessionFormat::ClaudeCode | SessionFormat::Codex =
        SessionFormat::detect(&crate::import::file_head(path)?)
    {
        return Ok(Err(Whole));
    }
    let mut file = File::open(path)?;
    let mut reader = BufReader::with_capacity(1 << 16, &mut file);
    let mut spots: Vec<Spot> = Vec::new();
    let mut index: HashMap<MessageId, usize> = HashMap::new();
    let mut format = None;
    let mut header = None;
    let mut buf = Vec::new();
    // A byte-order mark starts no line (`crate::lines`).
    let mut offset = if crate::lines::skip_bom(&mut reader)? {
        crate::lines::BOM.len() as u64
    } else {
        0
    };
    let mut line_no = 0usize;
    while let Some(terminated) = crate::lines::read_line(&mut reader, &mut buf)? {
        line_no += 1;
        let at = offset;
        offset += buf.len() as u64 + u64::from(terminated);
        let line = buf.as_slice();
        let lead = line.len() - line.trim_ascii_start().len();
        let line = line.trim_ascii();
        if line.is_empty() {
            continue;
        }
        let at = at + lead as u64;
        let Ok(text) = std::str::from_utf8(line) else {
            return Ok(Err(Whole));
        };
        let format = *format.get_or_insert_with(|| match pi::is_pi(text) {
            Some(version) => SessionFormat::Pi { version },
            None => SessionFormat::Agentmsg,
        });
        let head = serde_json::from_str::<Head<'_>>(text).ok();
        if head.is_none() && crate::transcript::split_glued_line(text).is_some() {
            // Entries on one line (an append that lost its newline, maybe
            // after a fragment a crash cut off). A line that reads is one
            // value, whatever `}{` its strings hold.
            return Ok(Err(Whole));
        }
        let (id, parent) = match (format, head) {
            // Converted as a whole ([`crate::import`]).
            (SessionFormat::ClaudeCode | SessionFormat::Codex, _) => return Ok(Err(Whole)),
            (SessionFormat::Pi { version }, _) if version < 2 => return Ok(Err(Whole)),
            (SessionFormat::Pi { .. }, Some(head)) => {
                if head.kind.as_ref().and_then(Key::text) == Some("session") {
                    header = Some((line_no, text.to_owned()));
                    continue;
                }
                // pi follows a parent only when the entry names one.
                let parent = match head.parent_id.as_ref().and_then(Key::text) {
                    Some(p) => ParentId::Id(MessageId::from(p)),
                    None => ParentId::Root,
                };
                (
                    head.id.as_ref().and_then(Key::text).map(MessageId::from),
                    parent,
                )
            }
            // Not an entry: pi keeps it out of the tree.
            (SessionFormat::Pi { .. }, None) => continue,
            (SessionFormat::Agentmsg, Some(head)) => {
                let parent = match &head.parent_id {
                    None => ParentId::Previous,
                    Some(Key::Null(())) => ParentId::Root,
                    Some(Key::Text(p)) => ParentId::Id(MessageId::from(p.as_ref())),
                    Some(Key::Other(_)) => return Ok(Err(Whole)),
                };
                let id = match &head.id {
                    None => None,
                    Some(Key::Text(id)) => Some(MessageId::from(id.as_ref())),
                    Some(_) => return Ok(Err(Whole)),
                };
                (id, parent)
            }
            // A line kept as it is: an entry without an id.
            (SessionFormat::Agentmsg, None) => (None, ParentId::Previous),
        };
        if let Some(id) = &id {
            if index.insert(id.clone(), spots.len()).is_some() {
                return Ok(Err(Whole));
            }
        }
        spots.push(Spot {
            line_no,
            start: at,
            len: line.len(),
            id,
            parent,
        });
    }
    drop(reader);
    // A parent after its child may close a cycle anywhere in the file, which
    // `open` refuses: let it say so.
    let forward = spots.iter().enumerate().any(|(i, s)| match &s.parent {
        ParentId::Id(p) => index.get(p.as_str()).is_some_and(|&p| p >= i),
        _ => false,
    });
    if forward {
        return Ok(Err(Whole));
    }
    // Walk from the leaf to the root.
    let start = match leaf {
        Some(id) => match index.get(id) {
            Some(&i) => Some(i),
            None => return Err(SessionError::NoSuchEntry(id.to_owned())),
        },
        None => spots.len().checked_sub(1),
    };
    let mut path = Vec::new();
    let mut at = start;
    while let Some(i) = at {
        if path.len() > spots.len() {
            return Ok(Err(Whole));
        }
        path.push(i);
        at = match &spots[i].parent {
            ParentId::Previous => i.checked_sub(1),
            ParentId::Root => None,
            ParentId::Id(p) => index.get(p.as_str()).copied(),
        };
    }
    path.reverse();
    let mut lines = Vec::with_capacity(path.len() + 1);
    lines.extend(header);
    for &i in &path {
        let spot = &spots[i];
        file.seek(SeekFrom::Start(spot.start))?;
        let mut text = vec![0; spot.len];
        file.read_exact(&mut text)?;
        match String::from_utf8(text) {
            Ok(text) => lines.push((spot.line_no, text)),
            Err(_) => return Ok(Err(Whole)),
        }
    }
    let session = Session::from_lines(lines)?;
    // The decoder read the lines as the first pass did, or the file is read
    // whole.
    let read: Vec<(usize, Option<&MessageId>)> = session
        .entries
        .iter()
        .filter(|e| e.in_tree())
        .map(|e| (e.line_no, e.id.as_ref()))
        .collect();
    let expected: Vec<(usize, Option<&MessageId>)> = path
        .iter()
        .map(|&i| (spots[i].line_no, spots[i].id.as_ref()))
        .collect();
    let leaf_ok =
        session.leaf.map(|l| session.entries[l].line_no) == path.last().map(|&i| spots[i].line_no);
    if read != expected || !leaf_ok || session.path_indexes(None)?.len() != path.len() {
        return Ok(Err(Whole));
    }
    Ok(Ok(session))
}

#[cfg(test)]
mod tests {
    use super::read_path;
    use crate::{Message, Session};

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_clean_tree_is_read_in_two_passes_and_only_its_path_is_kept() {
        let mut session = Session::new();
        let hi = session.append(Message::user("hi").into()).unwrap();
        for i in 0..50 {
            session
                .append(Message::user(format!("old {i}")).into())
                .unwrap();
        }
        session.branch(hi.as_str()).unwrap();
        let leaf = session.append(Message::user("new").into()).unwrap();
        let (_dir, path) = file(&String::from_utf8(session.to_bytes()).unwrap());
        let read = read_path(&path, Some(leaf.as_str())).unwrap();
        let Ok(read) = read else { panic!("read whole") };
        assert_eq!(read.entries().len(), 2);
        assert_eq!(read.entries()[1].line_no(), 52);
        // The current leaf too (the last line).
        assert!(matches!(read_path(&path, None).unwrap(), Ok(s) if s.entries().len() == 2));
    }

    /// `}{` inside a string (LaTeX, code) is no reason to read the file
    /// whole: the line reads as one value.
    #[test]
    fn braces_in_a_string_keep_the_two_passes() {
        let text = concat!(
            r#"{"role":"user","content":"\\frac{a}{b}","timestamp":1,"id":"a"}"#,
            "\n",
            r#"{"role":"user","content":"f(){}{}","timestamp":2,"id":"b","parentId":"a"}"#,
            "\n"
        );
        let (_dir, path) = file(text);
        let read = read_path(&path, None).unwrap();
        assert!(matches!(&read, Ok(s) if s.entries().len() == 2));
    }

    #[test]
    fn what_only_a_whole_read_answers_is_read_whole() {
        for text in [
            // A duplicate id.
            "{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1,\"id\":\"x\"}\n{\"role\":\"user\",\"content\":\"b\",\"timestamp\":1,\"id\":\"x\"}\n",
            // Two objects on one line.
            "{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1}{\"role\":\"user\",\"content\":\"b\",\"timestamp\":1}\n",
            // A parent after its child.
            "{\"role\":\"user\",\"content\":\"a\",\"timestamp\":1,\"id\":\"a\",\"parentId\":\"b\"}\n{\"role\":\"user\",\"content\":\"b\",\"timestamp\":1,\"id\":\"b\",\"parentId\":null}\n",
            // pi version 1.
            "{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"2025-01-01T00:00:00.000Z\",\"cwd\":\"/\"}\n",
        ] {
            let (_dir, path) = file(text);
            assert!(read_path(&path, None).unwrap().is_err(), "{text}");
            // And `open_path` still answers as `open` does.
            let whole = Session::open(&path).map(|s| s.context(None).map(|c| c.into_owned()));
            let part = Session::open_path(&path, None).map(|s| s.context(None).map(|c| c.into_owned()));
            assert_eq!(format!("{whole:?}"), format!("{part:?}"));
        }
    }
}
