//! Sessions: a transcript as a tree that branches and compacts, and the context
//! the model sees at any leaf.
//!
//! A [`Session`] reads an agentmsg transcript (each line may carry
//! `"parentId"`; a line without one follows the line before it, so a linear
//! transcript is a one-branch tree) or a pi session file (versions 1 to 3,
//! migrated in memory as pi migrates them). It keeps every line's exact text,
//! so a session saved unchanged is byte-identical, and appends entries in the
//! file's own format.
//!
//! ```
//! # extern crate agentmsg_runtime as agentmsg;
//! use agentmsg::{Message, Session};
//! let mut session = Session::new();
//! let hi = session.append(Message::user("hi").into()).unwrap();
//! session.append(Message::assistant("hello").into()).unwrap();
//! // Go back and try again: a second branch from `hi`.
//! session.branch(hi.as_str()).unwrap();
//! session.append(Message::assistant("hey").into()).unwrap();
//! let context = session.context(None).unwrap();
//! assert_eq!(context.messages.len(), 2);
//! assert_eq!(context.messages[1].as_llm().unwrap().as_assistant().unwrap().text_content(), "hey");
//! assert_eq!(session.leaves().len(), 2);
//! ```

mod compaction;
mod context;
mod entry;
mod error;
mod index;
pub(crate) mod lenient;
mod memory;
mod migrate;
mod node;
mod path_read;
mod pi;
mod read;
#[cfg(feature = "html")]
pub(crate) mod skeleton;
mod tree;

pub use compaction::{
    estimate_context_tokens, estimate_tokens, plan_compaction, serialize_conversation,
    should_compact, summary_prompt, CompactionPlan, CompactionPolicy, ContextTokens, FileLists,
    SummaryPart, DEFAULT_SUMMARY_PROMPT, NO_PRIOR_HISTORY, PI_SUMMARY_PROMPT,
    PI_SUMMARY_SYSTEM_PROMPT, PI_TURN_PREFIX_PROMPT, PI_UPDATE_SUMMARY_PROMPT,
    SUMMARY_SYSTEM_PROMPT, TOOL_RESULT_MAX_CHARS, UPDATE_SUMMARY_PROMPT,
};
#[cfg(all(feature = "http", any_provider))]
pub use compaction::{CompactError, CompactOptions, Compacted};
#[cfg(feature = "html")]
pub(crate) use context::{acts_as_compaction, entry_sends};
pub use context::{ContextMessage, ModelRef, SessionContext};
pub use entry::{Entry, EntryKind};
pub use error::{SessionError, SessionWarning, WarningKind};
pub use pi::PI_SESSION_VERSION;
// Told from a file's head by `import`, whose importers convert the formats
// other than agentmsg's and pi's.
pub use crate::import::SessionFormat;
#[cfg(feature = "html")]
pub(crate) use node::Node;
#[cfg(feature = "html")]
pub(crate) use read::EntryReader;

use std::borrow::Cow;

pub(crate) use entry::LineText;

/// A session: entries in file order, their tree, and the current leaf.
///
/// Build one with [`Session::read`] (the bytes of a file), [`Session::open`]
/// (a path), [`Session::from_lines`] (lines from any store) or
/// [`Session::new`] (empty, agentmsg format).
#[derive(Debug, Clone)]
pub struct Session {
    format: SessionFormat,
    /// The text read; entries read from it hold spans of it.
    text: Vec<u8>,
    entries: Vec<Entry>,
    index: index::IdIndex,
    leaf: Option<usize>,
    warnings: Vec<SessionWarning>,
    /// Entries before this index are in the text read or were saved.
    saved: usize,
    /// The line number of the next appended entry (0: not counted yet).
    next_line: usize,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    /// An empty agentmsg session.
    pub fn new() -> Self {
        Self {
            format: SessionFormat::Agentmsg,
            text: Vec::new(),
            entries: Vec::new(),
            index: index::IdIndex::default(),
            leaf: None,
            warnings: Vec::new(),
            saved: 0,
            next_line: 0,
        }
    }

    /// The file's format.
    pub fn format(&self) -> SessionFormat {
        self.format
    }

    /// Every entry, in file order (pi's header included; appended entries
    /// last).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The usage of every reply the session holds, on every branch,
    /// compacted away or not: what the session spent. The context
    /// ([`Session::context`]) holds only what the model sees next, so its
    /// usage leaves out the replies a compaction summarized and those of
    /// other branches; use it for what the next request sends, this for
    /// what the session cost. [`Session::total_stats`] adds the cost.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{AgentMessage, AssistantMessage, Message, Session, Usage};
    /// let mut session = Session::new();
    /// let reply = |output| AgentMessage::from(Message::Assistant(AssistantMessage {
    ///     usage: Usage::new(10, output),
    ///     ..AssistantMessage::default()
    /// }));
    /// let first = session.append(reply(1)).unwrap();
    /// session.append(reply(2)).unwrap();
    /// session.branch(first.as_str()).unwrap();
    /// session.append(reply(4)).unwrap();
    /// // Every reply, on both branches; the context holds two of them.
    /// assert_eq!(session.total_usage().output, 7);
    /// assert_eq!(session.context(None).unwrap().messages.len(), 2);
    /// ```
    pub fn total_usage(&self) -> crate::Usage {
        self.replies().map(|reply| &reply.usage).sum()
    }

    /// [`MessageStats`](crate::transcript::MessageStats) of every message
    /// the session holds, on every branch (the usage is
    /// [`Session::total_usage`]), each reply priced at its own date.
    pub fn total_stats(&self) -> crate::transcript::MessageStats {
        use crate::transcript::MessageQuery;
        self.entries.iter().filter_map(Entry::message).summarize()
    }

    /// Every reply of the session, in file order.
    fn replies(&self) -> impl Iterator<Item = &crate::AssistantMessage> {
        self.entries
            .iter()
            .filter_map(|e| e.message()?.as_llm()?.as_assistant())
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.index.get(&self.entries, id).map(|i| &self.entries[i])
    }

    /// What was read but is worth telling the user (missing parents, joined
    /// lines, lines that are not entries).
    pub fn warnings(&self) -> &[SessionWarning] {
        &self.warnings
    }

    /// The exact text of an entry's line (lossy when it is not UTF-8; see
    /// [`line_bytes`](Self::line_bytes)).
    pub fn line<'s>(&'s self, entry: &'s Entry) -> Cow<'s, str> {
        String::from_utf8_lossy(self.line_bytes(entry))
    }

    /// The exact bytes of an entry's line, without its newline.
    pub fn line_bytes<'s>(&'s self, entry: &'s Entry) -> &'s [u8] {
        match &entry.text {
            LineText::Span(start, end) => self.text.get(*start..*end).unwrap_or_default(),
            LineText::Replaced(_, _, text) | LineText::Owned(text) => text.as_bytes(),
        }
    }

    /// The entries appended since the session was read (or last
    /// [`mark_saved`](Self::mark_saved)): the lines a store must persist, in
    /// order.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::{Message, Session};
    /// let mut session = Session::new();
    /// session.append(Message::user("hi").into()).unwrap();
    /// let lines: Vec<String> = session.unsaved().iter().map(|e| session.line(e).into_owned()).collect();
    /// assert_eq!(lines.len(), 1);
    /// session.mark_saved();
    /// assert!(session.unsaved().is_empty());
    /// ```
    pub fn unsaved(&self) -> &[Entry] {
        &self.entries[self.saved.min(self.entries.len())..]
    }

    /// Marks every entry as persisted.
    pub fn mark_saved(&mut self) {
        self.saved = self.entries.len();
    }

    /// The whole file: the text read, byte for byte (with any line that was
    /// given an id rewritten), then each appended entry on its own line.
    ///
    /// ```
    /// # extern crate agentmsg_runtime as agentmsg;
    /// # use agentmsg::Session;
    /// let text = b"{\"role\":\"user\",\"content\":\"hi\",\"timestamp\":1}\n\n{\"role\":\"user\",\"content\":\"again\",\"timestamp\":2}";
    /// assert_eq!(Session::read(text).unwrap().to_bytes(), text);
    /// ```
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.text.len() + 256);
        let mut at = 0;
        for entry in &self.entries {
            match &entry.text {
                LineText::Span(_, end) => {
                    out.extend_from_slice(self.text.get(at..*end).unwrap_or_default());
                    at = *end;
                }
                LineText::Replaced(start, end, text) => {
                    out.extend_from_slice(self.text.get(at..*start).unwrap_or_default());
                    out.extend_from_slice(text.as_bytes());
                    at = *end;
                }
                LineText::Owned(_) => {}
            }
        }
        out.extend_from_slice(self.text.get(at..).unwrap_or_default());
        for entry in &self.entries {
            if let LineText::Owned(text) = &entry.text {
                if !out.is_empty() && !out.ends_with(b"\n") {
                    out.push(b'\n');
                }
                out.extend_from_slice(text.as_bytes());
                out.push(b'\n');
            }
        }
        out
    }

    /// Writes [`to_bytes`](Self::to_bytes) to `path` (replacing it).
    pub fn save(&mut self, path: impl AsRef<std::path::Path>) -> Result<(), SessionError> {
        std::fs::write(path, self.to_bytes())?;
        self.mark_saved();
        Ok(())
    }

    /// The label last set on an entry (`label` entries; a later one replaces
    /// or clears it).
    ///
    /// This reads every entry: to label many entries, take
    /// [`labels`](Self::labels) once.
    pub fn label_of(&self, id: &str) -> Option<&str> {
        let mut label = None;
        for entry in &self.entries {
            if let Some((target, text)) = entry.label() {
                if target.as_str() == id {
                    label = text;
                }
            }
        }
        label
    }

    /// Every entry's label (the last one set for it; a cleared label is
    /// absent), by the entry's id, read in one pass.
    pub fn labels(&self) -> std::collections::HashMap<String, &str> {
        let mut labels = std::collections::HashMap::new();
        for entry in &self.entries {
            if let Some((target, text)) = entry.label() {
                match text {
                    Some(text) => labels.insert(target.as_str().to_owned(), text),
                    None => labels.remove(target.as_str()),
                };
            }
        }
        labels
    }
}
