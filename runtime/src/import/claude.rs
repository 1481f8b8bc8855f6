//! A Claude Code log (`~/.claude/projects/*/*.jsonl`): the
//! tree of `uuid`/`parentUuid` becomes `id`/`parentId`.
//!
//! - Consecutive assistant entries of one response (Claude Code writes one
//!   entry per content block, all with the same `message.id`) become one
//!   assistant message, whose id is the last entry's `uuid` (an earlier
//!   entry's `uuid` names it too).
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
//! - A progress or system entry written between the entries of one response
//!   and naming it as parent (a hook run as a call starts) waits until the
//!   response is whole and follows it: it does not split the response, and
//!   what names it as parent names the response.
//! - A user's `image` and `document` blocks (base64 or URL sources) become
//!   agentmsg's `image` and `document` blocks.
//! - `isMeta` user entries (Claude Code's caveats and command output) are sent
//!   to the model as Claude Code sends them, so they are user messages too.
//! - A compaction (`system` entry of subtype `compact_boundary`, a root) is kept
//!   as an `extension` line, and the summary after it is the user message
//!   Claude Code sends; the tree then starts over there, as it does for Claude.
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
//!   holding the entry, so nothing is lost.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::providers::anthropic;

use super::{iso_millis, provider_block, ImportError, ImportWarning, Imported, WarningCode};

#[derive(Default)]
struct Out {
    main: Vec<String>,
    side: Vec<String>,
    /// The anchors of preserved segments not written yet: a main line naming
    /// one as parent (a relinked head) waits for it.
    anchors: std::collections::HashSet<String>,
    /// The anchor waited for and the main lines held back until it is
    /// written.
    held: Option<Held>,
}

/// Main lines held back until the anchor of a preserved segment is written.
struct Held {
    /// The anchor waited for.
    anchor: String,
    /// The lines held back, in order.
    lines: Vec<HeldLine>,
}

/// One line held back: its value (for its id and parent) and its text.
struct HeldLine {
    line: Value,
    text: String,
}

impl Out {
    fn push(&mut self, sidechain: bool, line: Value) -> Result<(), ImportError> {
        let text = super::line_text(&line)?;
        if sidechain {
            self.side.push(text);
            return Ok(());
        }
        let id = line.get("id").and_then(Value::as_str);
        if let Some(Held {
            anchor,
            lines: held,
        }) = &mut self.held
        {
            if id == Some(anchor.as_str()) {
                // What was written meanwhile and does not descend from the
                // head (the boundary, a rewound branch) goes before the
                // anchor; the head and what descends from it after.
                let mut moved = std::collections::HashSet::from([anchor.clone()]);
                let (mut before, mut after) = (Vec::new(), Vec::new());
                let mut last_moved = false;
                for HeldLine {
                    line: held_line,
                    text: held_text,
                } in held.drain(..)
                {
                    last_moved = match held_line.get("parentId") {
                        Some(Value::String(parent)) => moved.contains(parent),
                        Some(_) => false,
                        // A line without parentId follows the one before.
                        None => last_moved,
                    };
                    if last_moved {
                        if let Some(id) = held_line.get("id").and_then(Value::as_str) {
                            moved.insert(id.to_owned());
                        }
                        after.push(held_text);
                    } else {
                        before.push(held_text);
                    }
                }
                self.anchors.remove(anchor.as_str());
                self.main.append(&mut before);
                self.main.push(text);
                self.main.append(&mut after);
                self.held = None;
            } else {
                held.push(HeldLine { line, text });
            }
            return Ok(());
        }
        if let Some(parent) = line.get("parentId").and_then(Value::as_str) {
            if self.anchors.contains(parent) {
                self.held = Some(Held {
                    anchor: parent.to_owned(),
                    lines: vec![HeldLine { line, text }],
                });
                return Ok(());
            }
        }
        if let Some(id) = id {
            self.anchors.remove(id);
        }
        self.main.push(text);
        Ok(())
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
}

/// What one `compact_boundary` preserved.
struct Boundary {
    /// Its `preservedSegment`.
    segment: Option<Segment>,
    /// Its `preservedMessages`.
    kept: Option<Kept>,
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
    anchors: std::collections::HashSet<String>,
}

impl Preserved {
    fn see(&mut self, entry: &Map<String, Value>) {
        let Some(uuid) = text_of(entry.get("uuid")) else {
            return;
        };
        let parent = text_of(entry.get("parentUuid"));
        match self.parent.get_mut(uuid) {
            Some(known @ None) => *known = parent.map(str::to_owned),
            Some(Some(_)) => {}
            None => {
                self.parent
                    .insert(uuid.to_owned(), parent.map(str::to_owned));
            }
        }
        if text_of(entry.get("subtype")) != Some("compact_boundary") {
            return;
        }
        let metadata = entry.get("compactMetadata");
        let segment = metadata.and_then(|m| m.get("preservedSegment"));
        let field = |name| {
            segment
                .and_then(|s| text_of(s.get(name)))
                .map(str::to_owned)
        };
        let segment = match (field("headUuid"), field("anchorUuid"), field("tailUuid")) {
            (Some(head), Some(anchor), Some(tail)) => Some(Segment { head, anchor, tail }),
            _ => None,
        };
        let messages = metadata
            .and_then(|m| m.get("preservedMessages"))
            .and_then(|m| {
                let anchor = text_of(m.get("anchorUuid"))?.to_owned();
                let uuids: Option<Vec<String>> = m
                    .get("uuids")?
                    .as_array()?
                    .iter()
                    .map(|u| u.as_str().map(str::to_owned))
                    .collect();
                Some(Kept {
                    anchor,
                    uuids: uuids?,
                })
            });
        if segment.is_some() || messages.is_some() {
            self.boundaries.push(Boundary {
                segment,
                kept: messages,
            });
        }
    }

    /// What to relink: the kept messages when all are in the log, else the
    /// segment's head when its tail leads back to it.
    fn relinks(self) -> Relinks {
        let mut relinks = Relinks::default();
        // The anchor and its ancestors: a kept entry among them would make
        // the relinked tree a loop.
        let ancestry = |anchor: &str| -> std::collections::HashSet<String> {
            let mut seen = std::collections::HashSet::new();
            let mut at = Some(anchor.to_owned());
            while let Some(uuid) = at.filter(|u| seen.insert(u.clone())) {
                at = self.parent.get(&uuid).cloned().flatten();
            }
            seen
        };
        for Boundary { segment, kept } in &self.boundaries {
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

fn text_of(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

/// Converts the parsed entries of a Claude Code log.
pub(crate) fn import(entries: &[(usize, Map<String, Value>)]) -> Result<Imported, ImportError> {
    let mut imported = Imported::default();
    let mut preserved = Preserved::default();
    for (_, entry) in entries {
        preserved.see(entry);
    }
    let mut log = Log::default();
    log.relinked(preserved.relinks());
    for (line, entry) in entries {
        log.line(*line, entry, &mut imported)?;
    }
    log.end(&mut imported)?;
    for line in log.out.side.iter().chain(&log.out.main) {
        imported.text.extend_from_slice(line.as_bytes());
        imported.text.push(b'\n');
        imported.lines += 1;
    }
    imported.said_if_empty("Claude Code");
    Ok(imported)
}

/// Converts a Claude Code log read one line at a time, writing the
/// transcript to `out` as it goes, in two passes over the entries (`entries`
/// gives them anew for each): the sidechains' lines first, then the main
/// conversation's, as [`import`] orders them. The counts and diagnostics are
/// returned.
pub(crate) fn import_streamed<I>(
    entries: impl Fn() -> Result<I, ImportError>,
    out: &mut dyn std::io::Write,
) -> Result<Imported, ImportError>
where
    I: Iterator<Item = Result<(usize, Map<String, Value>), ImportError>>,
{
    // Both passes convert everything (so each line is what the whole read
    // makes of it); each writes its own lines, the second counts the rest.
    let mut imported = Imported::default();
    let mut written = 0;
    // The first pass also reads the preserved segments the second relinks.
    let mut preserved = Preserved::default();
    for sidechains in [true, false] {
        imported = Imported::default();
        let mut log = Log::default();
        if !sidechains {
            log.relinked(std::mem::take(&mut preserved).relinks());
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
        for entry in entries()? {
            let (line, entry) = entry?;
            if sidechains {
                preserved.see(&entry);
            }
            log.line(line, &entry, &mut imported)?;
            write(&mut log)?;
        }
        log.end(&mut imported)?;
        write(&mut log)?;
    }
    imported.lines = written;
    imported.said_if_empty("Claude Code");
    Ok(imported)
}

/// The state of a log's conversion.
#[derive(Default)]
struct Log {
    out: Out,
    /// uuid → the id of the line that stands for it (merged responses, split
    /// user entries).
    alias: Aliases,
    tool_names: HashMap<String, String>,
    /// The open assistant response: its message id, its line, whether it is
    /// a sidechain's.
    open: Option<OpenResponse>,
    /// The results of each response's calls, chained (see [`Results`]).
    results: Results,
    /// The message line each `extension` line with an id hangs from.
    anchor: HashMap<String, String>,
    /// Entries (other than user and assistant ones) written between the
    /// entries of the open response, naming it as parent: written after it,
    /// as its kind of `extension` line, once it is whole.
    pending: Vec<Pending>,
    /// Each uuid converted: the line of the log it was on, and a hash of its
    /// entry (not the entry: memory holds ids, never the file).
    seen: HashMap<String, Seen>,
    /// The entries a compaction kept, with the parent each takes
    /// ([`Preserved`]).
    relink: HashMap<String, String>,
    /// The line of the log being converted.
    at: usize,
}

/// The fields of a Claude Code entry every entry type is read by.
struct ClaudeEntry<'a> {
    /// The entry whole (an `extension` line keeps it).
    map: &'a Map<String, Value>,
    /// Its `type` (empty when it has none).
    kind: &'a str,
    /// Its `uuid`.
    uuid: Option<String>,
    /// Whether it is a subagent's (`isSidechain`).
    sidechain: bool,
    /// Its `timestamp` as Unix milliseconds (0 when it has none).
    timestamp: u64,
    /// Its `message` object.
    message: Option<&'a Map<String, Value>>,
}

impl<'a> ClaudeEntry<'a> {
    fn of(map: &'a Map<String, Value>) -> Self {
        Self {
            map,
            kind: text_of(map.get("type")).unwrap_or(""),
            uuid: text_of(map.get("uuid")).map(str::to_owned),
            sidechain: map.get("isSidechain").and_then(Value::as_bool) == Some(true),
            timestamp: text_of(map.get("timestamp"))
                .and_then(iso_millis)
                .unwrap_or(0),
            message: map.get("message").and_then(Value::as_object),
        }
    }
}

/// The assistant response being merged from its entries.
struct OpenResponse {
    /// The Messages API's id of the response (`message.id`).
    message_id: String,
    /// Its line so far.
    line: Map<String, Value>,
    /// Whether it is a sidechain's.
    sidechain: bool,
}

/// An entry that waits for the open response to be whole.
struct Pending {
    entry: Map<String, Value>,
    /// The kind of its `extension` line.
    kind: String,
    sidechain: bool,
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
    with_calls: std::collections::HashSet<usize>,
}

/// A hash of an entry's JSON, written straight into the hasher (no copy of
/// the entry's text is made).
fn entry_hash(entry: &Map<String, Value>) -> u64 {
    use std::hash::Hasher;
    /// Feeds what is written to a hasher.
    struct Feed<H>(H);
    impl<H: Hasher> std::io::Write for Feed<H> {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut feed = Feed(std::collections::hash_map::DefaultHasher::new());
    // Writing to a hasher cannot fail; a value serde_json cannot write
    // (none a parsed entry holds) only hashes what was written before it.
    let _ = serde_json::to_writer(&mut feed, entry);
    feed.0.finish()
}

/// The line id a `parentUuid` stands for.
fn resolve(alias: &Aliases, parent: Option<&Value>) -> Value {
    match parent.and_then(Value::as_str) {
        Some(p) => Value::from(alias.get(p).unwrap_or(p)),
        None => Value::Null,
    }
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

impl Log {
    /// The heads of preserved segments to relink to their anchors.
    fn relinked(&mut self, relinks: Relinks) {
        self.out.anchors = relinks.anchors;
        self.relink = relinks.parent;
    }

    /// The `parentId` of `entry`'s first line (see [`Log::placed`]).
    fn parent(&self, entry: &Map<String, Value>) -> Value {
        self.placed(entry, None, false).0
    }

    /// The `parentId` of `entry`'s first line: the line its `parentUuid`
    /// stands for, or, when that line is a response with calls or a line
    /// after it among their results, the last of those lines. Also the
    /// response among whose results the entry's lines go: an entry holding
    /// results of `results_of`, or an `extension` line (a progress or system
    /// entry between a call and its result).
    fn placed(
        &self,
        entry: &Map<String, Value>,
        results_of: Option<usize>,
        extension: bool,
    ) -> (Value, Option<usize>) {
        let parent = resolve(&self.alias, entry.get("parentUuid"));
        let Some(id) = parent.as_str() else {
            return (parent, None);
        };
        let anchor = self.anchor.get(id).map_or(id, String::as_str);
        let group = self.results.of.get(anchor).copied().or_else(|| {
            let &g = self.alias.group.get(anchor)?;
            let current = self.alias.ids.get(g).map(String::as_str) == Some(anchor);
            (current && self.results.with_calls.contains(&g)).then_some(g)
        });
        let Some(group) = group else {
            return (parent, None);
        };
        let joins = (extension || results_of == Some(group)).then_some(group);
        let tail = self
            .results
            .tail
            .get(&group)
            .or_else(|| self.alias.ids.get(group))
            .map_or(anchor, String::as_str);
        if tail == anchor {
            (parent, joins)
        } else {
            (Value::from(tail), joins)
        }
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
    fn calls(&mut self, uuid: &str, blocks: &[Value]) {
        let Some(&group) = self.alias.group.get(uuid) else {
            return;
        };
        for block in blocks {
            if let Some(id) = text_of(block.get("id")) {
                self.results.call.insert(id.to_owned(), group);
                self.results.with_calls.insert(group);
            }
        }
    }

    /// Converts the entry on `line` of the log. An entry whose uuid an
    /// earlier one has (Claude Code writes some entries twice) is left out
    /// when it is the same entry, and kept under the id `<uuid>~<line>`
    /// otherwise; either is said.
    fn line(
        &mut self,
        line: usize,
        entry: &Map<String, Value>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        self.at = line;
        let Some(uuid) = text_of(entry.get("uuid")).map(str::to_owned) else {
            return self.entry(entry, imported);
        };
        let hash = entry_hash(entry);
        match self.seen.get(&uuid) {
            None => {
                let relinked_to = self.relink.remove(&uuid);
                self.seen.insert(uuid, Seen { line, hash });
                match relinked_to {
                    // A message a compaction kept follows the anchor or the
                    // kept message before it, as Claude Code relinks it.
                    Some(parent) => {
                        let mut relinked = entry.clone();
                        relinked.insert("parentUuid".into(), Value::from(parent));
                        self.entry(&relinked, imported)
                    }
                    None => self.entry(entry, imported),
                }
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
                let mut renamed = entry.clone();
                renamed.insert("uuid".into(), Value::from(id));
                self.entry(&renamed, imported)
            }
        }
    }

    /// Converts one entry, by its type.
    fn entry(
        &mut self,
        map: &Map<String, Value>,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let e = ClaudeEntry::of(map);
        if let ("assistant", Some(message), Some(uuid)) = (e.kind, e.message, &e.uuid) {
            return self.assistant(&e, message, uuid, imported);
        }
        if self.waits_for_open(&e) {
            return Ok(());
        }
        self.flush_open(imported)?;
        match (e.kind, e.message, &e.uuid) {
            ("user", Some(message), Some(uuid)) => self.user(&e, message, uuid, imported),
            ("attachment", _, Some(uuid)) => match queued_prompt(map) {
                Some(blocks) => self.queued(&e, blocks, uuid, imported),
                None => self.other(&e, imported),
            },
            ("summary", _, _) => self.summary(&e, imported),
            _ => self.other(&e, imported),
        }
    }

    /// An `assistant` entry: the open response when it continues it (Claude
    /// Code writes one entry per content block, all with the same
    /// `message.id`), else a new response, open until another entry ends it.
    fn assistant(
        &mut self,
        e: &ClaudeEntry<'_>,
        message: &Map<String, Value>,
        uuid: &str,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let (entry, sidechain, timestamp) = (e.map, e.sidechain, e.timestamp);
        let response_id = text_of(message.get("id")).unwrap_or("").to_owned();
        unkept_call_fields(message.get("content"), self.at, imported);
        let mut blocks = assistant_blocks(message.get("content"), &mut self.tool_names);
        let calls: Vec<Value> = blocks
            .iter()
            .filter(|b| text_of(b.get("type")) == Some("toolCall"))
            .cloned()
            .collect();
        let mut merged = false;
        if let Some(OpenResponse {
            message_id: open_id,
            line,
            sidechain: open_side,
        }) = &mut self.open
        {
            let parent = text_of(entry.get("parentUuid"));
            let follows =
                parent.is_some_and(|p| self.alias.get(p) == line.get("id").and_then(Value::as_str));
            if !response_id.is_empty()
                && *open_id == response_id
                && follows
                && *open_side == sidechain
            {
                if let Some(Value::Array(content)) = line.get_mut("content") {
                    content.append(&mut blocks);
                }
                let old = text_of(line.get("id")).unwrap_or("").to_owned();
                line.insert("id".into(), Value::from(uuid));
                self.alias.moved(&old, uuid);
                if let Some(usage) = message.get("usage") {
                    line.insert("usage".into(), usage_of(usage));
                }
                if let Some(stop) = stop_reason(message.get("stop_reason")) {
                    line.insert("stopReason".into(), Value::from(stop));
                }
                merged = true;
            }
        }
        if merged {
            self.calls(uuid, &calls);
            return Ok(());
        }
        self.flush_open(imported)?;
        let mut line = Map::new();
        line.insert("role".into(), Value::from("assistant"));
        line.insert("content".into(), Value::Array(blocks));
        line.insert("api".into(), Value::from("anthropic-messages"));
        line.insert("provider".into(), Value::from("anthropic"));
        line.insert(
            "model".into(),
            message.get("model").cloned().unwrap_or(Value::from("")),
        );
        if !response_id.is_empty() {
            line.insert("responseId".into(), Value::from(response_id.clone()));
        }
        line.insert(
            "usage".into(),
            message.get("usage").map_or(
                json!({"input":0,"output":0,"cacheRead":0,"cacheWrite":0}),
                usage_of,
            ),
        );
        line.insert(
            "stopReason".into(),
            Value::from(stop_reason(message.get("stop_reason")).unwrap_or("stop")),
        );
        if entry.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
            // Claude Code's stand-in for a failed request (model
            // `<synthetic>`): a failed turn, which is not sent back.
            let text = text_of(entry.get("error")).map_or_else(
                || {
                    line.get("content")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(|b| text_of(b.get("text")))
                        .collect::<Vec<_>>()
                        .join("\n")
                },
                str::to_owned,
            );
            line.insert("stopReason".into(), Value::from("error"));
            line.insert("errorMessage".into(), Value::from(text));
        }
        line.insert("timestamp".into(), Value::from(timestamp));
        line.insert("id".into(), Value::from(uuid));
        line.insert("parentId".into(), self.parent(entry));
        self.alias.own(uuid);
        self.calls(uuid, &calls);
        self.open = Some(OpenResponse {
            message_id: response_id,
            line,
            sidechain,
        });
        Ok(())
    }

    /// Whether `e` waits for the open response: a progress or system entry
    /// between the entries of one response (Claude Code writes hook progress
    /// as a call starts, before the response's next block) does not end it;
    /// what names it as parent names the response.
    fn waits_for_open(&mut self, e: &ClaudeEntry<'_>) -> bool {
        let (Some(uuid), Some(open)) = (&e.uuid, &self.open) else {
            return false;
        };
        let open_id = open.line.get("id").and_then(Value::as_str);
        let parent = text_of(e.map.get("parentUuid")).and_then(|p| self.alias.get(p));
        if matches!(e.kind, "user" | "assistant" | "summary")
            || parent.is_none()
            || parent != open_id
            || open.sidechain != e.sidechain
        {
            return false;
        }
        let Some(&group) = open_id.and_then(|id| self.alias.group.get(id)) else {
            return false;
        };
        self.alias.group.insert(uuid.clone(), group);
        let kind = if e.kind.is_empty() { "entry" } else { e.kind };
        self.pending.push(Pending {
            entry: e.map.clone(),
            kind: format!("claude.{kind}"),
            sidechain: e.sidechain,
        });
        true
    }

    /// A `user` entry: a `toolResult` message for each `tool_result` block,
    /// then a user message of its other blocks; an `extension` line when it
    /// has neither.
    fn user(
        &mut self,
        e: &ClaudeEntry<'_>,
        message: &Map<String, Value>,
        uuid: &String,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let (entry, sidechain, timestamp) = (e.map, e.sidechain, e.timestamp);
        let results_of = match message.get("content") {
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter(|b| text_of(b.get("type")) == Some("tool_result"))
                .find_map(|b| self.results.call.get(text_of(b.get("tool_use_id"))?))
                .copied(),
            _ => None,
        };
        let (parent, joins) = self.placed(entry, results_of, false);
        let mut lines = Vec::new();
        let mut user_blocks = Vec::new();
        match message.get("content") {
            Some(Value::String(text)) => user_blocks.push(json!({"type":"text","text":text})),
            Some(Value::Array(blocks)) => {
                for block in blocks {
                    match text_of(block.get("type")) {
                        Some("tool_result") => {
                            let call = text_of(block.get("tool_use_id")).unwrap_or("");
                            let mut result = Map::new();
                            result.insert("role".into(), Value::from("toolResult"));
                            result.insert("toolCallId".into(), Value::from(call));
                            result.insert(
                                "toolName".into(),
                                Value::from(self.tool_names.get(call).cloned().unwrap_or_default()),
                            );
                            result_as_text(block.get("content"), call, self.at, imported);
                            result.insert("content".into(), result_blocks(block.get("content")));
                            result.insert(
                                "isError".into(),
                                Value::from(
                                    block
                                        .get("is_error")
                                        .and_then(Value::as_bool)
                                        .unwrap_or(false),
                                ),
                            );
                            result.insert("timestamp".into(), Value::from(timestamp));
                            if let Some(details) = entry.get("toolUseResult") {
                                result.insert("details".into(), details.clone());
                            }
                            lines.push(result);
                        }
                        Some("document") => user_blocks.push(media_block(block, "document")),
                        _ => user_blocks.push(text_or_image(block)),
                    }
                }
            }
            _ => {}
        }
        if !user_blocks.is_empty() {
            let mut user = Map::new();
            user.insert("role".into(), Value::from("user"));
            user.insert("content".into(), Value::Array(user_blocks));
            user.insert("timestamp".into(), Value::from(timestamp));
            lines.push(user);
        }
        let count = lines.len();
        let mut previous = parent;
        for (i, mut line) in lines.into_iter().enumerate() {
            let id = if i + 1 == count {
                uuid.clone()
            } else {
                format!("{uuid}/{i}")
            };
            line.insert("id".into(), Value::from(id.clone()));
            line.insert("parentId".into(), previous);
            if let Some(group) = joins {
                self.joined(group, std::slice::from_ref(&id));
            }
            previous = Value::from(id);
            imported.messages += 1;
            self.out.push(sidechain, Value::Object(line))?;
        }
        if count == 0 {
            self.extension(imported, "claude.user", entry, Some(uuid), sidechain)?;
        } else {
            self.alias.own(uuid);
        }
        Ok(())
    }

    /// A prompt the user typed while Claude worked (Claude Code 2.x records
    /// it as a `queued_command` attachment, and sends it to the model as a
    /// user message): the user's words, as a user message.
    fn queued(
        &mut self,
        e: &ClaudeEntry<'_>,
        blocks: Vec<Value>,
        uuid: &String,
        imported: &mut Imported,
    ) -> Result<(), ImportError> {
        let (entry, sidechain, timestamp) = (e.map, e.sidechain, e.timestamp);
        let (parent, _) = self.placed(entry, None, false);
        let line = json!({
            "role": "user",
            "content": blocks,
            "timestamp": timestamp,
            "id": uuid,
            "parentId": parent,
        });
        imported.warnings.push(ImportWarning::warning(
            self.at,
            WarningCode::QueuedPrompt,
            format!("the prompt queued in `{uuid}` is a user message of the user's words; the wrapper Claude Code sends around them (its text varies by version) is not reproduced"),
        ));
        imported.messages += 1;
        self.out.push(sidechain, line)?;
        self.alias.own(uuid);
        Ok(())
    }

    /// A `summary` entry (a title for the leaf it names): a label line.
    fn summary(&mut self, e: &ClaudeEntry<'_>, imported: &mut Imported) -> Result<(), ImportError> {
        let entry = e.map;
        let target = text_of(entry.get("leafUuid")).unwrap_or("");
        let line = json!({
            "role": "extension",
            "kind": "label",
            "data": {"targetId": target, "label": entry.get("summary").cloned().unwrap_or(Value::Null)},
        });
        self.out.push(false, line)?;
        imported.extensions += 1;
        Ok(())
    }

    /// Any other entry: an `extension` line of kind `claude.<type>` holding
    /// it, in its place in the tree.
    fn other(&mut self, e: &ClaudeEntry<'_>, imported: &mut Imported) -> Result<(), ImportError> {
        let kind = if e.kind.is_empty() { "entry" } else { e.kind };
        self.extension(
            imported,
            &format!("claude.{kind}"),
            e.map,
            e.uuid.as_ref(),
            e.sidechain,
        )
    }

    /// Ends the conversion: the response still open is written.
    fn end(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        self.flush_open(imported)?;
        self.out.finish(imported);
        Ok(())
    }

    /// Writes the open response, then the entries that waited for it.
    fn flush_open(&mut self, imported: &mut Imported) -> Result<(), ImportError> {
        flush(&mut self.open, &mut self.out, imported)?;
        for Pending {
            entry,
            kind: name,
            sidechain,
        } in std::mem::take(&mut self.pending)
        {
            let uuid = text_of(entry.get("uuid")).map(str::to_owned);
            self.extension(imported, &name, &entry, uuid.as_ref(), sidechain)?;
        }
        Ok(())
    }
}

impl Log {
    /// Writes `entry` whole as an `extension` line of `kind`; one with a
    /// `uuid` keeps its place in the tree, and what hangs from it hangs from
    /// the message line it hangs from as far as results are concerned.
    fn extension(
        &mut self,
        imported: &mut Imported,
        kind: &str,
        entry: &Map<String, Value>,
        uuid: Option<&String>,
        sidechain: bool,
    ) -> Result<(), ImportError> {
        let mut line = Map::new();
        line.insert("role".into(), Value::from("extension"));
        line.insert("kind".into(), Value::from(kind));
        line.insert("data".into(), Value::Object(entry.clone()));
        if let Some(uuid) = uuid {
            let (parent, joins) = self.placed(entry, None, true);
            if let Some(parent) = parent.as_str() {
                let anchor = self.anchor.get(parent).cloned();
                self.anchor
                    .insert(uuid.clone(), anchor.unwrap_or_else(|| parent.to_owned()));
            }
            if let Some(group) = joins {
                self.joined(group, std::slice::from_ref(uuid));
            }
            line.insert("id".into(), Value::from(uuid.clone()));
            line.insert("parentId".into(), parent);
        }
        self.out.push(sidechain, Value::Object(line))?;
        imported.extensions += 1;
        Ok(())
    }
}

fn flush(
    open: &mut Option<OpenResponse>,
    out: &mut Out,
    imported: &mut Imported,
) -> Result<(), ImportError> {
    if let Some(OpenResponse {
        line, sidechain, ..
    }) = open.take()
    {
        out.push(sidechain, Value::Object(line))?;
        imported.messages += 1;
    }
    Ok(())
}

/// A Claude Code message's `stop_reason` (the Messages API's) as `decode`
/// reads it: the runtime's one mapping (`refusal` is `guardRail`,
/// `pause_turn` is `paused`).
fn stop_reason(value: Option<&Value>) -> Option<&'static str> {
    let reason = value?.as_str()?;
    Some(crate::providers::anthropic::stop_reason(reason).as_str())
}

fn usage_of(usage: &Value) -> Value {
    let n = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    let (input, output) = (n("input_tokens"), n("output_tokens"));
    let (read, write) = (
        n("cache_read_input_tokens"),
        n("cache_creation_input_tokens"),
    );
    json!({
        "input": input,
        "output": output,
        "cacheRead": read,
        "cacheWrite": write,
        "totalTokens": input + output + read + write,
    })
}

/// The blocks of a `queued_command` attachment's prompt (a string, or text
/// and image blocks), when the entry is one.
fn queued_prompt(entry: &Map<String, Value>) -> Option<Vec<Value>> {
    let attachment = entry.get("attachment")?;
    if text_of(attachment.get("type")) != Some("queued_command") {
        return None;
    }
    let blocks: Vec<Value> = match attachment.get("prompt")? {
        Value::String(text) => vec![json!({"type":"text","text":text})],
        Value::Array(parts) => parts.iter().map(text_or_image).collect(),
        _ => return None,
    };
    (!blocks.is_empty()).then_some(blocks)
}

fn image_block(block: &Value) -> Value {
    media_block(block, "image")
}

/// An Anthropic `image` or `document` block as agentmsg's block of `kind`:
/// base64 data with its media type, or a URL; anything else (a file id, a
/// text source) its JSON as text.
fn media_block(block: &Value, kind: &str) -> Value {
    let source = block.get("source");
    let field = |key: &str| source.and_then(|s| s.get(key)).cloned();
    let mut out = match source.and_then(|s| s.get("type")).and_then(Value::as_str) {
        Some("base64") => json!({
            "type": kind,
            "data": field("data").unwrap_or(Value::from("")),
            "mimeType": field("media_type").unwrap_or(Value::from(if kind == "image" { "image/png" } else { "application/pdf" })),
        }),
        Some("url") if field("url").is_some_and(|u| u.is_string()) => {
            json!({"type": kind, "url": field("url")})
        }
        _ => return json!({"type": "text", "text": block.to_string()}),
    };
    if let (Some(title), "document") = (block.get("title").filter(|t| t.is_string()), kind) {
        out["title"] = title.clone();
    }
    out
}

fn assistant_blocks(
    content: Option<&Value>,
    tool_names: &mut HashMap<String, String>,
) -> Vec<Value> {
    let mut out = Vec::new();
    match content {
        Some(Value::String(text)) => out.push(json!({"type":"text","text":text})),
        Some(Value::Array(blocks)) => {
            for block in blocks {
                match text_of(block.get("type")) {
                    Some("text") => {
                        let mut text = json!({"type":"text","text": block.get("text").cloned().unwrap_or(Value::from(""))});
                        // A text citing what a server tool found (web
                        // search) keeps its citations, as the Anthropic
                        // decoder keeps them, to go back with it.
                        if let Some(citations) = block.get("citations").filter(|c| c.as_array().is_some_and(|a| !a.is_empty())) {
                            text["citations"] = citations.clone();
                        }
                        out.push(text);
                    }
                    Some("thinking") => {
                        let mut thinking = json!({"type":"thinking","thinking": block.get("thinking").cloned().unwrap_or(Value::from(""))});
                        if let Some(signature) = block.get("signature").filter(|s| s.as_str().is_some_and(|s| !s.is_empty())) {
                            thinking["signature"] = signature.clone();
                        }
                        out.push(thinking);
                    }
                    Some("redacted_thinking") => out.push(json!({"type":"redactedThinking","data": block.get("data").cloned().unwrap_or(Value::from(""))})),
                    // A `server_tool_use` (a tool the API ran itself, its
                    // result a block of this same message) is no call the
                    // client answers: it falls through to a provider block.
                    Some("tool_use") => {
                        let id = text_of(block.get("id")).unwrap_or("").to_owned();
                        let name = text_of(block.get("name")).unwrap_or("").to_owned();
                        tool_names.insert(id.clone(), name.clone());
                        let arguments = match block.get("input") {
                            Some(Value::Object(map)) => Value::Object(map.clone()),
                            Some(other) => json!({"input": other}),
                            None => json!({}),
                        };
                        out.push(json!({"type":"toolCall","id":id,"name":name,"arguments":arguments}));
                    }
                    // Any other block of the Messages API (server tools and
                    // their results, MCP, `compaction`…) is kept as the
                    // Anthropic decoder keeps it: replayed to Anthropic only.
                    _ if block.is_object() => out.push(provider_block(anthropic::API, block)),
                    _ => out.push(json!({"type":"text","text": block.to_string()})),
                }
            }
        }
        _ => {}
    }
    out
}

/// The fields of a `tool_use` block a tool call has no place for (as the
/// Anthropic decoder reads a call: id, name, input), said: a `caller` other
/// than `direct` (a call a server tool's code made), anything newer.
fn unkept_call_fields(content: Option<&Value>, line: usize, imported: &mut Imported) {
    let Some(Value::Array(blocks)) = content else {
        return;
    };
    for block in blocks {
        let Some(map) = block.as_object() else {
            continue;
        };
        if text_of(map.get("type")) != Some("tool_use") {
            continue;
        }
        let unkept: Vec<&str> = map
            .iter()
            .filter(|(key, value)| match key.as_str() {
                "type" | "id" | "name" | "input" | "cache_control" => false,
                "caller" => text_of(value.get("type")) != Some("direct"),
                _ => true,
            })
            .map(|(key, _)| key.as_str())
            .collect();
        if !unkept.is_empty() {
            imported.warnings.push(ImportWarning::warning(
                line,
                WarningCode::FieldNotKept,
                format!(
                    "`{}` of the tool_use `{}` not kept: a tool call has no place for it",
                    unkept.join("`, `"),
                    text_of(map.get("id")).unwrap_or("")
                ),
            ));
        }
    }
}

/// Says the blocks of a tool result that a `toolResult` holds only as their
/// JSON in text (it holds text and images): a `tool_reference` (what Claude
/// Code's ToolSearch returns, the tools it loads), a `document`…
fn result_as_text(content: Option<&Value>, call: &str, line: usize, imported: &mut Imported) {
    let Some(Value::Array(blocks)) = content else {
        return;
    };
    let mut kinds: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match text_of(b.get("type")) {
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
fn text_or_image(block: &Value) -> Value {
    match text_of(block.get("type")) {
        Some("text") => {
            json!({"type":"text","text": block.get("text").cloned().unwrap_or(Value::from(""))})
        }
        Some("image") => image_block(block),
        _ => json!({"type":"text","text": block.to_string()}),
    }
}

fn result_blocks(content: Option<&Value>) -> Value {
    match content {
        Some(Value::String(text)) => json!([{"type":"text","text":text}]),
        Some(Value::Array(blocks)) => Value::Array(blocks.iter().map(text_or_image).collect()),
        None | Some(Value::Null) => json!([]),
        Some(other) => json!([{"type":"text","text": other.to_string()}]),
    }
}
