//! Reading a session: lines, the format, entries, parents, and the checks
//! (duplicate ids, cycles, missing parents).

use std::path::Path;

use super::entry::{Entry, EntryKind, LineText};
use super::error::{SessionError, SessionWarning, WarningKind};
use super::index::IdIndex;
use super::node::Node;
use super::pi::{self, PiLine};
use super::{Session, SessionFormat};
use crate::custom::Registry;
use crate::transcript::{decode_line, DecodeMode, UnknownMessage};
use crate::{AgentMessage, MessageId, ParentId};

/// One piece of text that holds one JSON value (or does not parse).
struct Piece {
    line_no: usize,
    start: usize,
    end: usize,
}

impl Session {
    /// Reads a session from the bytes of its file: an agentmsg transcript or a
    /// pi session (detected from its first line), decoded through the global
    /// registry.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::Session;
    /// # use agentmsg::session::SessionFormat;
    /// let pi = br#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/"}
    /// {"type":"message","id":"a1b2c3d4","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1735689601000}}
    /// "#;
    /// let session = Session::read(pi).unwrap();
    /// assert_eq!(session.format(), SessionFormat::Pi { version: 3 });
    /// assert_eq!(session.context(None).unwrap().messages.len(), 1);
    /// assert_eq!(session.to_bytes(), pi); // unchanged, byte for byte
    /// ```
    pub fn read(bytes: &[u8]) -> Result<Self, SessionError> {
        Self::read_with(bytes, Registry::global())
    }

    /// [`read`](Self::read) through `registry`.
    pub fn read_with(bytes: &[u8], registry: &Registry) -> Result<Self, SessionError> {
        Self::read_owned_with(super::memory::copy(bytes), registry)
    }

    /// [`read`](Self::read), keeping `bytes` as the session's text instead of
    /// a copy of them.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::Session;
    /// let bytes = b"{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n".to_vec();
    /// let session = Session::read_owned(bytes.clone()).unwrap();
    /// assert_eq!(session.to_bytes(), bytes);
    /// ```
    pub fn read_owned(bytes: Vec<u8>) -> Result<Self, SessionError> {
        Self::read_owned_with(bytes, Registry::global())
    }

    /// [`read_owned`](Self::read_owned) through `registry`.
    pub fn read_owned_with(bytes: Vec<u8>, registry: &Registry) -> Result<Self, SessionError> {
        let format = SessionFormat::detect(&bytes);
        if let SessionFormat::ClaudeCode | SessionFormat::Codex = format {
            let imported = crate::import::import_as(format, &bytes)?;
            let mut session = Self::read_owned_with(imported.text, registry)?;
            session.format = format;
            let said = imported.warnings.into_iter().map(|w| SessionWarning {
                line: w.line,
                kind: WarningKind::Imported(w),
            });
            session.warnings.splice(0..0, said);
            return Ok(session);
        }
        let mut session = Session::new();
        session.text = bytes;
        session.load(registry)?;
        Ok(session)
    }

    /// Reads the session file at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SessionError> {
        Self::read_owned(super::memory::read_file(path.as_ref())?)
    }

    /// Reads a session from lines of a store: `(line number, text)` in order.
    /// The text is kept as the lines joined by newlines.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::Session;
    /// let lines = vec![
    ///     (1, r#"{"role":"user","content":"hi","timestamp":1,"id":"a"}"#.to_owned()),
    ///     (2, r#"{"role":"assistant","content":[],"timestamp":2,"id":"b","parentId":"a"}"#.to_owned()),
    /// ];
    /// let session = Session::from_lines(lines).unwrap();
    /// assert_eq!(session.entry("b").unwrap().parent_id(&session).unwrap().as_str(), "a");
    /// ```
    pub fn from_lines<I>(lines: I) -> Result<Self, SessionError>
    where
        I: IntoIterator<Item = (usize, String)>,
    {
        let mut text = Vec::new();
        let mut numbers = Vec::new();
        for (line_no, line) in lines {
            text.extend_from_slice(line.as_bytes());
            text.push(b'\n');
            numbers.push(line_no);
        }
        // The joined text is the session's own: no copy of it.
        text.shrink_to_fit();
        let mut session = Self::read_owned(text)?;
        // Number entries by the store's lines, not the joined text's.
        for entry in &mut session.entries {
            if let Some(&n) = entry.line_no.checked_sub(1).and_then(|i| numbers.get(i)) {
                entry.line_no = n;
            }
        }
        for warning in &mut session.warnings {
            if let Some(&n) = warning.line.checked_sub(1).and_then(|i| numbers.get(i)) {
                warning.line = n;
            }
        }
        Ok(session)
    }

    fn load(&mut self, registry: &Registry) -> Result<(), SessionError> {
        let text = std::mem::take(&mut self.text);
        let mut reader = EntryReader::new(registry);
        // A hint: too few, and the vector grows.
        if self
            .entries
            .try_reserve_exact(estimate_lines(&text))
            .is_ok()
        {
            super::memory::advise_huge(&mut self.entries);
        }
        for line in crate::lines::raw_lines(&text) {
            let entries = &mut self.entries;
            reader.line(
                line.number,
                line.start,
                line.bytes,
                &mut self.warnings,
                |entry| {
                    entries.push(entry);
                },
            );
        }
        self.text = text;
        self.format = reader.format();
        self.finish_reading(&reader)
    }

    /// What every reading ends with, once the entries are read in file order
    /// by an [`EntryReader`]: pi's version 1 migration, the parents linked
    /// (and the checks), the leaf.
    fn finish_reading(&mut self, reader: &EntryReader<'_>) -> Result<(), SessionError> {
        self.leaf = finish_reading(
            self.format,
            reader,
            &mut self.entries,
            &mut self.index,
            &mut self.warnings,
        )?;
        self.saved = self.entries.len();
        Ok(())
    }
}

/// About how many lines `text` holds, for room for its entries: the lines of
/// its first MiB, scaled to its length (counting them all would be a pass
/// over the text of its own).
fn estimate_lines(text: &[u8]) -> usize {
    const SAMPLE: usize = 1 << 20;
    let head = text.get(..SAMPLE).unwrap_or(text);
    let lines = memchr::memchr_iter(b'\n', head).count() + 1;
    // Rounded up: one line too many costs less than one too few.
    let scaled = lines.saturating_mul(text.len().div_ceil(SAMPLE).max(1));
    // No more than a line of two bytes could give.
    scaled.min(text.len() / 2 + 1)
}

impl Node for Entry {
    fn id(&self) -> Option<&MessageId> {
        self.id.as_ref()
    }

    fn declared(&self) -> &ParentId {
        &self.declared
    }

    fn line_no(&self) -> usize {
        self.line_no
    }

    fn in_tree(&self) -> bool {
        Entry::in_tree(self)
    }

    fn parent(&self) -> Option<usize> {
        self.parent
    }

    fn set_parent(&mut self, parent: Option<usize>) {
        self.parent = parent;
    }

    fn first_kept(&self) -> Option<&MessageId> {
        self.as_compaction()?.first_kept_id.as_ref()
    }

    fn migrate(&mut self, id: MessageId, declared: ParentId) {
        self.id = Some(id);
        self.declared = declared;
    }

    fn keep_from(&mut self, first_kept: Option<MessageId>) {
        if let EntryKind::Compaction(c) = &mut self.kind {
            if c.first_kept_id.is_none() {
                c.first_kept_id = first_kept;
            }
        }
    }
}

/// [`Session::finish_reading`] over any nodes: migrates a pi version 1
/// session, links the nodes; the leaf.
pub(crate) fn finish_reading<N: Node>(
    format: SessionFormat,
    reader: &EntryReader<'_>,
    nodes: &mut [N],
    index: &mut IdIndex,
    warnings: &mut Vec<SessionWarning>,
) -> Result<Option<usize>, SessionError> {
    if let SessionFormat::Pi { version } = format {
        if version < 2 {
            migrate_v1(nodes, &reader.first_kept);
        }
    }
    link(nodes, index, warnings)
}

/// pi's v1 → v2 migration, in memory: ids and parents in file order, and
/// `firstKeptEntryIndex` (an index into the file's entries, the header
/// counted) as the id of that entry. pi draws random ids; these are the
/// entry's ordinal as 8 hex digits, the same on every read.
fn migrate_v1<N: Node>(nodes: &mut [N], first_kept: &[(usize, usize)]) {
    let mut previous: Option<MessageId> = None;
    let mut ordinal = 0u32;
    for node in nodes.iter_mut() {
        if !node.in_tree() {
            continue;
        }
        ordinal += 1;
        let id = MessageId::from(format!("{ordinal:08x}"));
        let declared = match previous.take() {
            Some(p) => ParentId::Id(p),
            None => ParentId::Root,
        };
        node.migrate(id.clone(), declared);
        previous = Some(id);
    }
    for &(at, index) in first_kept {
        let target = nodes
            .get(index)
            .filter(|n| n.in_tree())
            .and_then(|n| n.id().cloned());
        if let Some(node) = nodes.get_mut(at) {
            node.keep_from(target);
        }
    }
}

/// Indexes the ids (failing on a duplicate), resolves every node's parent,
/// checks for cycles and gives the leaf: one pass over the nodes, and a
/// second over those alone whose parent comes after them in the file (a
/// parent not found at all makes a root, with a warning).
fn link<N: Node>(
    nodes: &mut [N],
    index: &mut IdIndex,
    warnings: &mut Vec<SessionWarning>,
) -> Result<Option<usize>, SessionError> {
    index.reserve(nodes.len(), nodes);
    let mut previous: Option<usize> = None;
    let mut later = Vec::new();
    // Whether every parent comes before its child, which no cycle can.
    let mut ordered = true;
    for i in 0..nodes.len() {
        let node = &nodes[i];
        if !node.in_tree() {
            continue;
        }
        if let (Some(first), Some(id)) = (index.insert(nodes, i), node.id()) {
            return Err(SessionError::DuplicateId {
                id: id.clone(),
                first_line: nodes[first].line_no(),
                second_line: node.line_no(),
            });
        }
        let parent = match node.declared() {
            ParentId::Previous => previous,
            ParentId::Root => None,
            ParentId::Id(p) => {
                let found = index.get(nodes, p.as_str());
                if found.is_none() {
                    later.push(i);
                }
                found
            }
        };
        ordered &= parent.is_none_or(|p| p < i);
        nodes[i].set_parent(parent);
        previous = Some(i);
    }
    for i in later {
        let ParentId::Id(p) = nodes[i].declared() else {
            continue;
        };
        match index.get(nodes, p.as_str()) {
            Some(found) => {
                ordered = false;
                nodes[i].set_parent(Some(found));
            }
            None => warnings.push(SessionWarning {
                line: nodes[i].line_no(),
                kind: WarningKind::MissingParent {
                    id: nodes[i].id().cloned(),
                    parent: p.clone(),
                },
            }),
        }
    }
    for node in nodes.iter() {
        let Some(first_kept) = node.first_kept() else {
            continue;
        };
        if index.get(nodes, first_kept.as_str()).is_none() {
            warnings.push(SessionWarning {
                line: node.line_no(),
                kind: WarningKind::FirstKeptMissing {
                    compaction: node.id().cloned(),
                    first_kept: first_kept.clone(),
                },
            });
        }
    }
    if !ordered {
        check_cycles(nodes)?;
    }
    Ok(previous)
}

/// Fails on a `parentId` cycle, naming its ids. Linear in the nodes: each
/// is walked up once.
fn check_cycles<N: Node>(nodes: &[N]) -> Result<(), SessionError> {
    // 0: not seen; w + 1: seen on walk w.
    let mut seen = vec![0usize; nodes.len()];
    let mut done = vec![false; nodes.len()];
    let mut trail = Vec::new();
    for start in 0..nodes.len() {
        if done[start] {
            continue;
        }
        let walk = start + 1;
        let mut at = Some(start);
        trail.clear();
        while let Some(i) = at {
            if done[i] {
                break;
            }
            if seen[i] == walk {
                let from = trail.iter().position(|&t| t == i).unwrap_or(0);
                let mut ids: Vec<String> =
                    trail[from..].iter().map(|&t| describe(&nodes[t])).collect();
                ids.push(describe(&nodes[i]));
                return Err(SessionError::Cycle { ids });
            }
            seen[i] = walk;
            trail.push(i);
            at = nodes[i].parent();
        }
        for &t in &trail {
            done[t] = true;
        }
    }
    Ok(())
}

/// A node's id, or `line N` when it has none.
fn describe<N: Node>(node: &N) -> String {
    match node.id() {
        Some(id) => id.to_string(),
        None => format!("line {}", node.line_no()),
    }
}

/// The indexes from the root to node `start`.
pub(crate) fn path_from<N: Node>(nodes: &[N], start: Option<usize>) -> Vec<usize> {
    let mut path = Vec::new();
    let mut at = start;
    // Cycles were refused on reading, so this ends; the bound is a guard.
    while let Some(i) = at {
        if path.len() > nodes.len() {
            break;
        }
        path.push(i);
        at = nodes[i].parent();
    }
    path.reverse();
    path
}

/// What a piece of the text reads as.
enum PieceRead {
    /// An entry (and a pi v1 compaction's `firstKeptEntryIndex`).
    Entry(Entry, Option<usize>),
    /// An agentmsg line that no type reads, kept as an unknown message.
    Kept(Entry),
    /// A pi line that is no entry, reported.
    NotAnEntry(SessionWarning),
}

/// Reads a session's lines into entries, one line at a time, as
/// [`Session::read`] does: the format told by the first non-blank line, each
/// line trimmed and read as an entry of that format (a line that does not
/// read split when it holds several objects), and what is worth saying kept
/// as warnings. [`Session::finish_reading`] then links the entries read.
///
/// The session reader and the exporter's two passes over a file
/// ([`crate::export`]) read through it, so both read the same entries.
pub(crate) struct EntryReader<'r> {
    registry: &'r Registry,
    format: Option<SessionFormat>,
    /// How many entries were given.
    count: usize,
    /// A pi version 1 compaction's `firstKeptEntryIndex`, by the index of
    /// the compaction's entry.
    first_kept: Vec<(usize, usize)>,
}

impl<'r> EntryReader<'r> {
    /// A reader decoding through `registry`.
    pub(crate) fn new(registry: &'r Registry) -> Self {
        Self {
            registry,
            format: None,
            count: 0,
            first_kept: Vec::new(),
        }
    }

    /// The format the first non-blank line told (an agentmsg transcript
    /// before any).
    pub(crate) fn format(&self) -> SessionFormat {
        self.format.unwrap_or(SessionFormat::Agentmsg)
    }

    /// Reads line `number` (its `bytes` without the `\n`, starting at byte
    /// `start` of the text), giving `each` the entries it holds, in order.
    pub(crate) fn line(
        &mut self,
        number: usize,
        start: usize,
        bytes: &[u8],
        warnings: &mut Vec<SessionWarning>,
        mut each: impl FnMut(Entry),
    ) {
        let lead = bytes.len() - bytes.trim_ascii_start().len();
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() {
            return;
        }
        let line = Piece {
            line_no: number,
            start: start + lead,
            end: start + lead + trimmed.len(),
        };
        // Valid UTF-8 is checked once here, for every reader of the line.
        let text = std::str::from_utf8(trimmed).ok();
        let format = *self
            .format
            .get_or_insert_with(|| match text.and_then(pi::is_pi) {
                Some(version) => SessionFormat::Pi { version },
                None => SessionFormat::Agentmsg,
            });
        let read = read_piece(format, trimmed, text, &line, self.registry, warnings);
        if let PieceRead::Entry(..) = read {
            self.give(format, read, text, line.start, warnings, &mut each);
            return;
        }
        // A line that does not read may hold several entries, an append that
        // lost its newline; looked for only then, as a valid line may hold
        // `}{` in a string.
        let split = text
            .and_then(crate::transcript::split_glued_line)
            .filter(|split| split.len() > 1);
        let Some(split) = split else {
            self.give(format, read, text, line.start, warnings, &mut each);
            return;
        };
        warnings.push(SessionWarning {
            line: line.line_no,
            kind: WarningKind::JoinedObjects { count: split.len() },
        });
        for range in split {
            let part = Piece {
                line_no: line.line_no,
                start: line.start + range.start,
                end: line.start + range.end,
            };
            let part_text = text.and_then(|t| t.get(range.clone()));
            let bytes = trimmed.get(range).unwrap_or_default();
            let read = read_piece(format, bytes, part_text, &part, self.registry, warnings);
            self.give(format, read, text, line.start, warnings, &mut each);
        }
    }

    /// Gives `each` what a piece of a line read as (`text`, the trimmed
    /// line, starting at byte `start` of the session's text), or keeps its
    /// warning.
    fn give(
        &mut self,
        format: SessionFormat,
        read: PieceRead,
        text: Option<&str>,
        start: usize,
        warnings: &mut Vec<SessionWarning>,
        each: &mut impl FnMut(Entry),
    ) {
        let (entry, first_kept) = match read {
            PieceRead::Entry(entry, first_kept) => (entry, first_kept),
            PieceRead::Kept(entry) => (entry, None),
            PieceRead::NotAnEntry(warning) => {
                warnings.push(warning);
                return;
            }
        };
        if let Some(index) = first_kept {
            self.first_kept.push((self.count, index));
        }
        let piece = match entry.text {
            LineText::Span(from, to) => {
                text.and_then(|t| t.get(from.saturating_sub(start)..to.saturating_sub(start)))
            }
            _ => None,
        };
        if let Some(warning) = piece.and_then(|piece| surrogate_warning(format, &entry, piece)) {
            warnings.push(warning);
        }
        self.count += 1;
        each(entry);
    }
}

/// A warning when `entry` is a message read only with its lone UTF-16
/// surrogates as U+FFFD (its line, `line`, keeps them).
fn surrogate_warning(format: SessionFormat, entry: &Entry, line: &str) -> Option<SessionWarning> {
    let EntryKind::Message(message) = &entry.kind else {
        return None;
    };
    if message.is_unknown() || !crate::json::surrogates::may_have_surrogates(line) {
        return None;
    }
    crate::transcript::replace_lone_surrogates(line)?;
    Some(SessionWarning {
        line: entry.line_no,
        kind: WarningKind::Lenient {
            field: if matches!(format, SessionFormat::Pi { .. }) {
                "message".to_owned()
            } else {
                "content".to_owned()
            },
            what: "a string holds a lone UTF-16 surrogate (half of a character cut in two); it is sent as U+FFFD, and the line keeps its bytes".to_owned(),
        },
    })
}

/// Reads one piece of a session's text, its `bytes` (`text` when they are
/// UTF-8), as an entry of a session in `format`.
fn read_piece(
    format: SessionFormat,
    bytes: &[u8],
    text: Option<&str>,
    piece: &Piece,
    registry: &Registry,
    warnings: &mut Vec<SessionWarning>,
) -> PieceRead {
    let mut warn = |found: Vec<super::lenient::Lenience>| {
        warnings.extend(found.into_iter().map(|l| SessionWarning {
            line: piece.line_no,
            kind: WarningKind::Lenient {
                field: l.field,
                what: l.what,
            },
        }));
    };
    let entry = |kind, id, declared, timestamp| Entry {
        line_no: piece.line_no,
        text: LineText::Span(piece.start, piece.end),
        id,
        declared,
        parent: None,
        kind,
        timestamp,
    };
    match format {
        SessionFormat::Agentmsg | SessionFormat::ClaudeCode | SessionFormat::Codex => {
            let decoded = match text {
                Some(line) => decode_line(line, registry, DecodeMode::Lenient),
                None => Err(crate::transcript::DecodeError::MissingRole),
            };
            let (mut message, mut read) = match decoded {
                Ok(message) => (message, true),
                Err(error) => (
                    AgentMessage::Unknown(UnknownMessage::malformed(bytes.to_vec(), error)),
                    false,
                ),
            };
            // A message that does not decode, read as pi reads it where it
            // can be (the line keeps its bytes).
            if pi::is_malformed(&message) || !read {
                let lenient = text.and_then(|line| super::lenient::read_as_pi(line, registry));
                if let Some((lenient, found)) = lenient {
                    warn(found);
                    message = lenient;
                    read = true;
                }
            }
            let (id, declared) = (message.id().cloned(), message.parent_id().clone());
            let unknown = message.is_unknown();
            let made = entry(EntryKind::Message(message), id, declared, 0);
            // A line kept as unknown may be entries joined on one line.
            if read && !unknown {
                PieceRead::Entry(made, None)
            } else {
                PieceRead::Kept(made)
            }
        }
        SessionFormat::Pi { version } => {
            let parsed = match text {
                Some(line) => Ok(line),
                None => std::str::from_utf8(bytes).map_err(|e| e.to_string()),
            }
            .and_then(|line| {
                if line.trim_start().starts_with('{') {
                    serde_json::from_str::<PiLine<'_>>(line).map_err(|e| e.to_string())
                } else {
                    Err("not a JSON object".to_owned())
                }
            });
            match parsed {
                Ok(head) => {
                    let mut read = pi::read_entry(head, registry, version);
                    warn(std::mem::take(&mut read.lenient));
                    let first_kept = read.first_kept_index;
                    let made = entry(read.kind, read.id, read.parent, read.timestamp);
                    PieceRead::Entry(made, first_kept)
                }
                Err(error) => PieceRead::NotAnEntry(SessionWarning {
                    line: piece.line_no,
                    kind: WarningKind::NotAnEntry { error },
                }),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::estimate_lines;

    #[test]
    fn lines_are_counted_in_a_small_text_and_estimated_in_a_big_one() {
        assert_eq!(estimate_lines(b""), 1);
        assert_eq!(estimate_lines(b"{}\n{}\n{}"), 3);
        // 3 MiB of 64-byte lines: the first MiB's count, times three.
        let text = [[b'x'; 63].as_slice(), b"\n"].concat().repeat(3 << 14);
        assert_eq!(estimate_lines(&text), 3 * ((1 << 14) + 1));
        // Never more than a line per two bytes, whatever the first MiB says.
        let mut text = vec![b'\n'; 1 << 20];
        text.extend(std::iter::repeat_n(b'x', 3 << 20));
        assert_eq!(estimate_lines(&text), text.len() / 2 + 1);
    }
}
